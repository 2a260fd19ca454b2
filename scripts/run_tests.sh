#!/usr/bin/env bash
# The test suite, in two pytest runs at once: the Spark tests (one local Spark session, CPU-bound in its JVM and
# Python workers) and the migration comparison (member processes, mostly waiting on rebalances) beside all the
# others (mostly waiting on ZooKeeper sessions, rebalances and brokers), which on a 2-core machine takes the time of
# the longer run instead of the sum: the migration tests are in the second run because it is the shorter one.
# The first run's tests go to two worker processes (pytest-xdist), a test module's tests to one worker, so that its
# module fixtures are made once: waiting tests overlap, and each worker starts its own servers as each run does.
# Each run starts its own servers. The second run's output is kept in a file and shown after the first one's; the
# exit status is non-zero if either run failed. Extra arguments go to both runs. Each run's duration is printed at
# the end, and appended to the file ZKCONSUMER_TEST_TIMES names, when set (scripts/test.sh, for its summary).
# With ZKCONSUMER_CONTAINERS_AFTER_MAIN=1 (scripts/test.sh sets it), the container pass (scripts/containers.sh
# test) starts as soon as the main run ends, beside what is left of the second run, instead of after both: a core
# would otherwise wait idle for the second run's last minute. Its duration goes to the same file, its failure fails
# the script.
# Usage: scripts/run_tests.sh [VENV] [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
shift || true
spark_log="$(mktemp -t zkconsumer-spark-tests.XXXXXX)"
spark_time="$spark_log.seconds"
trap 'rm -f "$spark_log" "$spark_time"' EXIT

# One time scale for both runs and their workers (tests/time_scale.py), unless it is given.
if [ -z "${ZKCONSUMER_TEST_TIME_SCALE:-}" ]; then
  ZKCONSUMER_TEST_TIME_SCALE="$("$VENV/bin/python" tests/time_scale.py)" || exit $?
  export ZKCONSUMER_TEST_TIME_SCALE
fi

(
  began=$SECONDS
  "$VENV/bin/python" -m pytest -m "spark or migration" -p no:cacheprovider "$@" >"$spark_log" 2>&1 &
  child=$!
  trap 'kill "$child" 2>/dev/null' TERM
  wait "$child"
  rc=$?
  echo "$((SECONDS - began))" > "$spark_time"
  exit "$rc"
) &
spark_pid=$!
trap 'kill "$spark_pid" 2>/dev/null; rm -f "$spark_log" "$spark_time"' INT TERM

began=$SECONDS
"$VENV/bin/python" -m pytest -m "not spark and not migration" -n 2 --dist loadfile "$@"
rest=$?
main_s=$((SECONDS - began))
containers=0
if [ -n "${ZKCONSUMER_CONTAINERS_AFTER_MAIN:-}" ]; then
  containers_began=$SECONDS
  scripts/containers.sh test "$VENV"
  containers=$?
  containers_s=$((SECONDS - containers_began))
fi
wait "$spark_pid"
spark=$?
spark_s="$(cat "$spark_time" 2>/dev/null || echo '?')"

printf '\n===== the Spark and migration tests (run beside the others) =====\n'
cat "$spark_log"
printf 'main run %s s; Spark and migration run %s s beside it\n' "$main_s" "$spark_s"
if [ -n "${ZKCONSUMER_TEST_TIMES:-}" ]; then
  printf 'main %s\nspark %s\n' "$main_s" "$spark_s" >> "$ZKCONSUMER_TEST_TIMES"
  [ -n "${containers_s:-}" ] && printf 'containers %s\n' "$containers_s" >> "$ZKCONSUMER_TEST_TIMES"
fi
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
if [ "$spark" -ne 0 ] && [ "$spark" -ne 5 ]; then exit "$spark"; fi
exit "$containers"

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
# test) starts as soon as the first of the two runs ends, beside what is left of the other, instead of after both: a
# core would otherwise wait idle for the other run's last minute. Its duration goes to the same file, its failure
# fails the script.
# Usage: scripts/run_tests.sh [VENV] [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
shift || true
spark_log="$(mktemp -t zkconsumer-spark-tests.XXXXXX)"
trap 'rm -f "$spark_log"' EXIT

# One time scale for both runs and their workers (tests/time_scale.py), unless it is given.
if [ -z "${ZKCONSUMER_TEST_TIME_SCALE:-}" ]; then
  ZKCONSUMER_TEST_TIME_SCALE="$("$VENV/bin/python" tests/time_scale.py)" || exit $?
  export ZKCONSUMER_TEST_TIME_SCALE
fi

# A command a script starts with & ignores SIGINT, and Python keeps an ignored SIGINT ignored: each run is given
# Ctrl-C's default back, so that its tests' processes take SIGINT as they do started from a terminal.
with_ctrl_c() {
  "$VENV/bin/python" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
spark_began=$SECONDS
with_ctrl_c "$VENV/bin/python" -m pytest -m "spark or migration" -p no:cacheprovider "$@" >"$spark_log" 2>&1 &
spark_pid=$!
main_began=$SECONDS
with_ctrl_c "$VENV/bin/python" -m pytest -m "not spark and not migration" -n 2 --dist loadfile "$@" &
main_pid=$!
trap 'kill "$spark_pid" "$main_pid" 2>/dev/null; rm -f "$spark_log"' INT TERM

# whichever run ends first, its time taken; then the container pass beside the other
finished() {  # pid: whether that run has ended (its exit status then collected)
  kill -0 "$1" 2>/dev/null && return 1
  return 0
}
rest="" spark=""
while [ -z "$rest" ] && [ -z "$spark" ]; do
  wait -n "$main_pid" "$spark_pid" 2>/dev/null
  if finished "$main_pid"; then wait "$main_pid"; rest=$?; main_s=$((SECONDS - main_began)); fi
  if finished "$spark_pid"; then wait "$spark_pid"; spark=$?; spark_s=$((SECONDS - spark_began)); fi
done
containers=0
if [ -n "${ZKCONSUMER_CONTAINERS_AFTER_MAIN:-}" ]; then
  containers_began=$SECONDS
  scripts/containers.sh test "$VENV"
  containers=$?
  containers_s=$((SECONDS - containers_began))
fi
if [ -z "$rest" ]; then wait "$main_pid"; rest=$?; main_s=$((SECONDS - main_began)); fi
if [ -z "$spark" ]; then wait "$spark_pid"; spark=$?; spark_s=$((SECONDS - spark_began)); fi

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

#!/usr/bin/env bash
# The test suite, in two pytest runs at once: the main run (everything but Spark), and the Spark tests (one local
# Spark session in one worker; the class archive's and the standalone cluster's Spark JVMs in another, beside it:
# in one process, they made the Spark run the longest pass by over a minute). On a 2-core machine they take the
# time of the longer run instead of the sum: most tests mostly wait (on ZooKeeper sessions, rebalances, brokers, a
# JVM's start). Together they keep both cores busy from start to end (vmstat: no idle time in a whole run,
# docs/development.md, run 64): CPU, not waiting, sets the whole's length.
# The main run's tests go to four worker processes (pytest-xdist), a test module's tests to one worker, so that its
# module fixtures are made once: waiting tests overlap, and each worker starts its own servers. The modules that
# share a costly server of their own (a Kafka node, an ensemble, the Spark session) go to one worker together, which
# starts it once (tests/suite_order.py's SHARED_SERVERS, by the suite's scheduler under --dist loadgroup,
# tests/conftest.py). The modules that
# take longest are handed out first (tests/suite_order.py's LONG_MODULES, in the collection's order, which
# --no-loadscope-reorder keeps), so that none of them starts when the other workers have nothing left.
# The modules marked spark_run, which start no server of the session's, run in the Spark run too: its second worker,
# done with the class archive's and the cluster's JVMs minutes before the main run ends, takes them from the main run.
# The Spark run's output is kept in a file and shown after the main run's; the exit status is non-zero if either
# failed. Extra arguments go to both. Each run's duration is printed at the end, and appended to the file
# ZKCONSUMER_TEST_TIMES names, when set (scripts/test.sh, for its summary).
# With ZKCONSUMER_CONTAINERS_BESIDE=1 (scripts/test.sh sets it), the container pass (scripts/containers.sh test)
# runs beside them from the start, its output shown after theirs: it mostly waits on a container's start and on
# sessions, and after any run it would add its minute to the whole. Its duration goes to the same file, its
# failure fails the script.
# Usage: scripts/run_tests.sh [VENV] [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
# Python's bytecode caches written, whatever the machine says (PYTHONDONTWRITEBYTECODE is set on some): without them
# every process of the suite (each member, command, front and xdist worker, thousands in a run) compiles again the
# modules it imports (this package's some 0.15 s of CPU a process) and pytest rewrites every test module in each run
# and worker. The caches go to __pycache__ directories, which git ignores.
unset PYTHONDONTWRITEBYTECODE
VENV="${1:-.venv}"
shift || true
spark_log="$(mktemp -t zkconsumer-spark-tests.XXXXXX)"
containers_log="$spark_log.containers"
times_file="$spark_log.times"
trap 'rm -f "$spark_log" "$containers_log" "$times_file"' EXIT

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
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
# timed NAME COMMAND...: the command, then "NAME SECONDS" into the times file, its exit status kept
timed() {
  local name="$1" began=$SECONDS rc
  shift
  "$@"
  rc=$?
  echo "$name $((SECONDS - began))" >> "$times_file"
  return "$rc"
}
# The Spark run at the main run's priority: at nice 5 it ended 70 s after the main run in one run (591 s in all), but
# on a loaded machine a query's Python worker, starved, missed Spark's own time to connect back (not on the
# suite's time scale) and failed the test (docs/development.md, runs 49-52).
timed spark with_ctrl_c "$VENV/bin/python" -m pytest -m "spark or spark_run" -n 2 --dist loadgroup --no-loadscope-reorder \
  -p no:cacheprovider "$@" >"$spark_log" 2>&1 &
spark_pid=$!
containers_pid=""
if [ -n "${ZKCONSUMER_CONTAINERS_BESIDE:-}" ]; then
  timed containers scripts/containers.sh test "$VENV" >"$containers_log" 2>&1 &
  containers_pid=$!
fi
timed main with_ctrl_c "$VENV/bin/python" -m pytest -m "not spark and not spark_run" -n 4 --dist loadgroup --no-loadscope-reorder "$@" &
main_pid=$!
trap 'kill "$spark_pid" "$main_pid" $containers_pid 2>/dev/null
      rm -f "$spark_log" "$containers_log" "$times_file"' INT TERM
wait "$main_pid"
rest=$?
wait "$spark_pid"
spark=$?
containers=0
if [ -n "$containers_pid" ]; then
  wait "$containers_pid"
  containers=$?
  printf '\n===== the container pass (run beside the others) =====\n'
  cat "$containers_log"
fi
seconds() { awk -v n="$1" '$1 == n { print $2 }' "$times_file"; }
main_s="$(seconds main)" spark_s="$(seconds spark)"
containers_s="$(seconds containers)"

printf '\n===== the Spark tests (run beside the others) =====\n'
cat "$spark_log"
printf 'main run %s s; Spark run %s s beside it\n' "$main_s" "$spark_s"
if [ -n "${ZKCONSUMER_TEST_TIMES:-}" ]; then
  printf 'main %s\nspark %s\n' "$main_s" "$spark_s" >> "$ZKCONSUMER_TEST_TIMES"
  [ -n "${containers_s:-}" ] && printf 'containers %s\n' "$containers_s" >> "$ZKCONSUMER_TEST_TIMES"
fi
if [ "$rest" -ne 0 ]; then exit "$rest"; fi
if [ "$spark" -ne 0 ] && [ "$spark" -ne 5 ]; then exit "$spark"; fi  # 5: none selected (a -k, say)
exit "$containers"

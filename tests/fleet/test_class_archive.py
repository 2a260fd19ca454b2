"""The class archive of a local command's Spark JVM (zkconsumer.fleet.class_archive): the first command's session
records it and waits for it, the next one's JVM maps it, and an archive that is not whole is never handed to a JVM
(which would die of a bus error reading past its end)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import wait_for
from time_scale import bounded

from zkconsumer.fleet.class_archive import (
    ARCHIVE_ENV,
    PARTIAL,
    SUFFIX,
    archive_directory,
    archive_path,
    class_archive,
    plan,
    whole,
)

#: its commands start local Spark JVMs: with the Spark tests, in their run of one process (scripts/run_tests.sh)
pytestmark = pytest.mark.spark


def test_the_directory_is_the_cache_unless_the_environment_names_one_or_turns_it_off(tmp_path, monkeypatch):
    assert archive_directory({"HOME": "/home/op"}) == Path("/home/op/.cache/zkconsumer")
    cache = {"HOME": "/home/op", "XDG_CACHE_HOME": "/var/cache/op"}
    assert archive_directory(cache) == Path("/var/cache/op/zkconsumer")
    assert archive_directory({"HOME": "/home/op", ARCHIVE_ENV: "/srv/archives"}) == Path("/srv/archives")
    for off in ("off", "OFF", "0", "false", "no"):
        assert archive_directory({"HOME": "/home/op", ARCHIVE_ENV: off}) is None
    monkeypatch.chdir(tmp_path)
    assert archive_directory({ARCHIVE_ENV: "archives"}) == tmp_path / "archives"  # not one per working directory
    assert archive_directory({}) is None


def test_a_session_maps_the_archive_found_and_records_one_otherwise():
    found = Path("/c/spark-classes-ab.1000.jsa")
    mapping = plan(Path("/c"), "spark-classes-ab", found, "7-a1", can_record=True)
    assert mapping is not None and not mapping.record and f"-XX:SharedArchiveFile={found}" in mapping.java_options
    assert plan(Path("/c"), "spark-classes-ab", found, "7-a1", can_record=False) == mapping
    recording = plan(Path("/c"), "spark-classes-ab", None, "7-a1", can_record=True)
    assert recording is not None and recording.record and recording.path == Path("/c/spark-classes-ab.7-a1.partial")
    assert "-XX:ArchiveClassesAtExit=/c/spark-classes-ab.7-a1.partial" in recording.java_options
    assert "-Xlog:cds*=off" in recording.java_options and "-Xlog:cds*=off" in mapping.java_options
    assert plan(Path("/c"), "spark-classes-ab", None, "7-a1", can_record=False) is None  # no base archive to add to
    for odd in ("/my cache", "/a:b", "/it's", '/"q"'):  # Spark splits at white space and reads quotes; HotSpot a colon
        assert plan(Path(odd), "spark-classes-ab", None, "7-a1", can_record=True) is None


def test_an_archive_is_whole_only_at_the_size_its_name_gives():
    final = archive_path(Path("/c/spark-classes-ab.7-a1.partial"), 1000)
    assert final == Path("/c/spark-classes-ab.1000.jsa")
    assert whole(final, 1000)
    assert not whole(final, 999) and not whole(final, 1001)
    assert not whole(Path("/c/spark-classes-ab.7.partial"), 7) and not whole(Path("/c/spark-classes-ab.0.jsa"), 0)


def test_a_short_archive_is_removed_and_recorded_again_not_mapped(tmp_path):
    env = {**os.environ, ARCHIVE_ENV: str(tmp_path)}
    first = class_archive(env)
    assert first is not None and first.record
    stem = first.path.name.split(".")[0]
    short = tmp_path / f"{stem}.5000{SUFFIX}"
    short.write_bytes(b"x" * 4000)  # cut short: a disk full, a copy interrupted
    again = class_archive(env)
    assert again is not None and again.record and not short.exists()
    (tmp_path / f"{stem}.4000{SUFFIX}").write_bytes(b"x" * 4000)
    found = class_archive(env)
    assert found is not None and not found.record and found.path == tmp_path / f"{stem}.4000{SUFFIX}"


def test_a_java_runtime_without_the_jdks_own_archive_records_none(tmp_path):
    runtime = tmp_path / "jre"
    (runtime / "bin").mkdir(parents=True)
    (runtime / "bin" / "java").write_text("#!/bin/sh\n")
    env = {**os.environ, ARCHIVE_ENV: str(tmp_path / "archives"), "JAVA_HOME": str(runtime)}
    assert class_archive(env) is None  # HotSpot cannot start recording without it: the JVM would not start
    (runtime / "lib" / "server").mkdir(parents=True)
    (runtime / "lib" / "server" / "classes.jsa").write_bytes(b"")
    recording = class_archive(env)
    assert recording is not None and recording.record


def _mapped_by_a_jvm(archive: Path) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if str(archive) in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            continue
    return False


@pytest.mark.timeout(420)  # two Spark JVMs' starts; its inner waits end before
def test_the_first_command_records_the_archive_and_the_next_ones_jvm_maps_it(tmp_path):
    """A command's first local session records the archive and waits for it; the next command's JVM maps it. A small
    job in each: what a JVM records and maps is Spark's classes, whatever the job (``analyze`` runs its job in this
    same session: tests/spark/test_cluster_master.py runs one as a process)."""
    archives = tmp_path / "archives"
    argv, env = _session_command(archives, "print(spark.range(3).count())")
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the session's start, its job, and the archive's writing as the JVM exits: the whole test took 111-200 s in
        # fresh clones' make test at time scales 1.0-2.1 (docs/development.md, runs 70-78), 32 CPU-s alone
        out, err = first.communicate(timeout=bounded(250))
    finally:
        first.kill()  # nothing, once it has ended; a command still running at the deadline is not left behind
    assert first.returncode == 0 and out.split()[-1] == "3", err
    assert f"writing Spark's classes to {archives}" in err and "cds" not in out + err
    written = list(archives.iterdir())
    assert len(written) == 1 and written[0].suffix == SUFFIX and whole(written[0], written[0].stat().st_size)
    assert not list(archives.glob(f"*{PARTIAL}"))

    second = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = wait_for(lambda: "mapped" if _mapped_by_a_jvm(written[0]) else second.poll(), timeout=100, interval=0.1)
        assert seen == "mapped", f"the second command ended ({seen}) without its JVM mapping the archive"
        out, err = second.communicate(timeout=bounded(100))
    finally:
        second.kill()
    assert second.returncode == 0 and out.split()[-1] == "3", err
    assert "writing Spark's classes" not in err and "cds" not in out + err
    assert list(archives.iterdir()) == written


def _session_command(archives: Path, body: str, **env: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of a command's local session (what ``analyze`` runs its job in) running ``body``."""
    script = "from zkconsumer.fleet.spark_session import command_session\n" \
             f"with command_session('local[1]', 't') as spark:\n    {body}\n"
    return [sys.executable, "-c", script], {**os.environ, ARCHIVE_ENV: str(archives), **env}


def _session(archives: Path, body: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A command's local session in a process of its own, running ``body`` (:func:`_session_command`)."""
    argv, environment = _session_command(archives, body, **env)
    return subprocess.run(argv, env=environment, capture_output=True, text=True, timeout=bounded(100))


def test_a_first_command_whose_job_fails_records_nothing(tmp_path):
    archives = tmp_path / "archives"
    failed = _session(archives, "raise SystemExit(3)")
    assert failed.returncode == 3, failed.stderr
    assert "writing Spark's classes" not in failed.stderr
    assert list(archives.iterdir()) == []  # made for the recording; its partial file removed with the JVM killed


def test_a_jvm_that_cannot_start_recording_runs_the_command_without_the_archive(tmp_path):
    archives = tmp_path / "archives"
    # class sharing off for every JVM: HotSpot refuses to start when also asked to record an archive
    run = _session(archives, "print(spark.range(3).count())", JAVA_TOOL_OPTIONS="-Xshare:off")
    assert run.returncode == 0 and run.stdout.split()[-1] == "3", run.stderr
    assert "writing Spark's classes" not in run.stderr and list(archives.iterdir()) == []


def test_an_archive_a_jvm_cannot_map_is_removed_and_the_command_runs_without_it(tmp_path):
    archives = tmp_path / "archives"
    # sharing required: a JVM that cannot map the archive given does not start at all
    env = {**os.environ, ARCHIVE_ENV: str(archives), "JAVA_TOOL_OPTIONS": "-Xshare:on"}
    recording = class_archive(env)
    assert recording is not None and recording.record
    spoiled = archives / f"{recording.path.name.split('.')[0]}.4096{SUFFIX}"
    spoiled.write_bytes(b"\0" * 4096)  # whole by its name, but no archive
    run = _session(archives, "print(spark.range(3).count())", JAVA_TOOL_OPTIONS="-Xshare:on")
    assert run.returncode == 0 and run.stdout.split()[-1] == "3", run.stderr
    assert not spoiled.exists()  # a later run records a good one



def test_an_archive_is_kept_when_no_jvm_starts_with_or_without_it(tmp_path):
    """A session that cannot start for another reason (here a driver memory Java cannot take) fails in one line; the
    archive, not the cause, is left for the next run."""
    archives = tmp_path / "archives"
    recording = class_archive({**os.environ, ARCHIVE_ENV: str(archives)})
    assert recording is not None and recording.record
    kept = archives / f"{recording.path.name.split('.')[0]}.4096{SUFFIX}"
    kept.write_bytes(b"\0" * 4096)  # whole by its name: a command would map it
    script = "from zkconsumer.fleet.spark_session import command_session\n" \
             "with command_session('local[1]', 't', {'spark.driver.memory': '1x'}) as spark:\n    pass\n"
    run = subprocess.run([sys.executable, "-c", script], env={**os.environ, ARCHIVE_ENV: str(archives)},
                         capture_output=True, text=True, timeout=bounded(100))
    assert run.returncode != 0
    assert "UsageError: cannot start Spark with master 'local[1]'" in run.stderr, run.stderr  # the CLI's one line
    assert kept.exists()

"""``zkconsumer migration compare`` refuses bad input with one line, before anything starts (no servers, no
output directory)."""

from __future__ import annotations

import pytest
from support import zkconsumer_cli

pytestmark = pytest.mark.migration


@pytest.mark.parametrize(("args", "message"), [
    (["--protocols", "legacy-range,sticky"], "unknown protocol 'sticky'"),
    (["--protocols", ","], "names no protocol"),
    (["--partitions", "0"], "--partitions must be between 1 and 64"),
    (["--rate", "0"], "--rate must be more than 0"),
    (["--rate", "1000"], "more than the 2000 the comparison produces"),
    (["--pace", "-1"], "--pace must not be negative"),
    (["--bootstrap-server", "127.0.0.1:1"], "--bootstrap-server needs --zookeeper"),
    (["--scenario", "upgrade", "--protocols", "cooperative-sticky,legacy-range"],
     "scene 2, action 1: upgrade cannot be played by legacy-range: a ZooKeeper group has no in-place path to KIP-848"),
    (["--member-command", "", "--protocols", "range"], "--member-command is empty"),
    (["--member-command", "java 'Consumer", "--protocols", "range"], "No closing quotation"),
    (["--member-command", "java Consumer", "--protocols", "legacy-range"],
     "it runs as the members of the modern protocols, and legacy-range are all legacy"),
])
def test_bad_input_is_one_line_and_nothing_is_made(tmp_path, args, message):
    out = tmp_path / "out"
    result = zkconsumer_cli("migration", "compare", "--output-dir", str(out), *args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zkconsumer migration: ") and message in lines[0], lines
    assert not out.exists()


def test_an_output_dir_with_something_in_it_is_refused(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    result = zkconsumer_cli("migration", "compare", "--output-dir", str(tmp_path))
    assert result.returncode == 2
    assert "exists and is not an empty directory" in result.stderr and "Traceback" not in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]

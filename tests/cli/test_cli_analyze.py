"""``zkconsumer analyze``'s edge: bad input is one line and a non-zero exit before Spark is even started (the jobs
themselves are tested on the shared Spark session in tests/spark)."""

from __future__ import annotations

import pytest

from zkconsumer import cli


@pytest.mark.parametrize("action", ["fleet", "events"])
def test_missing_input_and_existing_output_are_one_line(action, tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    assert cli.main(["analyze", action, str(missing), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("zkconsumer analyze: ") and f"{missing} does not exist" in err

    given = tmp_path / "in.jsonl"
    given.write_text("{}\n")
    (tmp_path / "out").mkdir()
    assert cli.main(["analyze", action, str(given), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out"]

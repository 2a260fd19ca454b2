"""``zkconsumer trace show|render``: exit codes, what goes to stdout and stderr, broken lines named, files written
whole; one run through the installed entry point in a child process, the rest in-process for speed."""

from __future__ import annotations

import io
import json
import sys

import pytest
from support import SAMPLE_EVENTS, zkconsumer_cli

from zkconsumer import cli

SAMPLE = SAMPLE_EVENTS


def run(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def event(name: str, second: int, **fields) -> str:
    return json.dumps({**fields, "event": name, "level": "info", "timestamp": f"2026-01-02T03:04:{second:02d}.000000Z"})


def test_show_prints_the_timeline(capsys):
    status, out, err = run(["trace", "show", str(SAMPLE)], capsys)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("trace from 2026-11-21T21:12:00.928Z, 19.078 s, 3 consumers")
    assert any("gs2_c2  !! attempt 1 failed (ownership conflict)" in line for line in lines)
    assert "=== summary ===" in lines


def test_show_skips_broken_lines_and_says_which(tmp_path, capsys):
    good = SAMPLE.read_text().splitlines()
    broken = [good[0], "garbage", *good[1:5], "", '{"event": "x"}', *good[5:]]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(broken) + "\n")
    status, out, err = run(["trace", "show", str(path)], capsys)
    assert status == 0
    assert err == (f"warning: skipped 2 broken lines of {path} (not a JSON event with 'event' and 'timestamp': "
                   f"line 2, 8)\n")
    assert out.splitlines()[-1] == "2 broken lines skipped"


def test_show_reads_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(event("consumer.connected", 1, consumer_id="c1", session_id="0x5")
                                                  + "\n"))
    status, out, err = run(["trace", "show", "-"], capsys)
    assert (status, err) == (0, "")
    assert "   +0.000s  c1  connected to ZooKeeper (session 0x5)" in out.splitlines()


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read {path}: No such file or directory"),
    ("", "{path} holds no event"),
    ("\n\n", "{path} holds no event"),
    ("nope\n[1]\n", "{path} holds no event (2 broken lines)"),
    (event("bridge.started", 1) + "\n" + event("local.up", 2) + "\n",
     "{path} holds no consumer or demo event (2 events of other components)"),
])
def test_nothing_to_draw_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "events.jsonl"
    if content is not None:
        path.write_text(content)
    for action in (["show", str(path)], ["render", str(path), "--html", str(tmp_path / "out.html")]):
        status, out, err = run(["trace", *action], capsys)
        assert status == 2 and out == ""
        assert err.splitlines()[-1] == "zkconsumer trace: " + message.format(path=path)
        assert "Traceback" not in err
    assert not (tmp_path / "out.html").exists()


def test_render_writes_html_and_svg(tmp_path, capsys):
    html, svg = tmp_path / "t.html", tmp_path / "t.svg"
    status, out, err = run(["trace", "render", str(SAMPLE), "--html", str(html), "--svg", str(svg)], capsys)
    assert (status, err) == (0, "")
    what = "(3 consumers, 9 rebalances, 4 partitions, 0 markers)"
    assert out.splitlines() == [f"wrote {html} {what}", f"wrote {svg} {what}"]
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>Rebalance timeline: sample-events.jsonl</title>" in page
    assert '<g class="lane" data-consumer="gs2_c3">' in page
    assert svg.read_text().startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_render_needs_an_output_and_a_writable_place(tmp_path, capsys):
    status, _, err = run(["trace", "render", str(SAMPLE)], capsys)
    assert (status, err) == (2, "zkconsumer trace: say where to write: --html OUT.html and/or --svg OUT.svg\n")
    target = tmp_path / "missing-dir" / "t.html"
    status, out, err = run(["trace", "render", str(SAMPLE), "--html", str(target)], capsys)
    assert status == 2 and out == ""
    assert err == f"zkconsumer trace: cannot write {target}: No such file or directory\n"


def test_render_title_option(tmp_path, capsys):
    html = tmp_path / "t.html"
    status, _, _ = run(["trace", "render", str(SAMPLE), "--html", str(html), "--title", "Scene <3>"], capsys)
    assert status == 0
    assert "<h1>Scene &lt;3&gt;</h1>" in html.read_text()


def test_the_installed_command(tmp_path):
    """The real entry point: the subcommand is registered, a failure is one line without a traceback."""
    shown = zkconsumer_cli("trace", "show", str(SAMPLE))
    assert shown.returncode == 0 and "took over sample-1 from gs2_c2-0" in shown.stdout
    missing = zkconsumer_cli("trace", "render", str(tmp_path / "none.jsonl"), "--html", str(tmp_path / "x.html"))
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"zkconsumer trace: cannot read {tmp_path / 'none.jsonl'}: No such file or directory\n"

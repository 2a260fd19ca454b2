"""``zkconsumer offsets export|import`` (ExportZkOffsets, ImportZkOffsets) against a real ZooKeeper and a group a
zkconsumer connector committed: the file format, the round trip into another group, the dry run, the live-member
warning, and a malformed file refused whole."""

from __future__ import annotations

import io

import pytest
from support import produce, take, wait_for, zkconsumer_cli

from zkconsumer import ConsumerConfig, create_connector
from zkconsumer.kafka.topics import create_topic
from zkconsumer.progress import Progress
from zkconsumer.tools.import_zk_offsets import apply_import, plan_import
from zkconsumer.tools.zk_offsets_file import OffsetEntry, OffsetsFileError, format_lines, parse_line, parse_offsets_file


def cli(zk_connect: str, *args: str, **kwargs):
    return zkconsumer_cli(*args, "--zookeeper", zk_connect, **kwargs)


def offsets(zk, group: str, topic: str) -> dict[str, bytes]:
    base = f"/consumers/{group}/offsets/{topic}"
    return {p: zk.get(f"{base}/{p}")[0] for p in sorted(zk.get_children(base))}


def test_export_import_round_trip_dry_run_and_live_members(zk, kafka_zk, bootstrap_servers, topic_name, tmp_path):
    create_topic(bootstrap_servers, topic_name, 2)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/1/state"))
    produce(bootstrap_servers, topic_name, [b"a", b"b", b"c"], partition=0)
    produce(bootstrap_servers, topic_name, [b"d", b"e"], partition=1)
    connector = create_connector(ConsumerConfig({
        "zookeeper.connect": kafka_zk, "group.id": "src", "consumer.id": "c1", "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 200, "rebalance.backoff.ms": 200,
    }))
    try:
        stream = connector.create_message_streams({topic_name: 1})[topic_name][0]
        assert len(take(stream, 5)) == 5
        connector.commit_offsets()
        assert offsets(zk, "src", topic_name) == {"0": b"3", "1": b"2"}
        zk.create(f"/consumers/src/offsets/{topic_name}-x/0", b"oops", makepath=True)
        zk.create(f"/consumers/src/offsets/{topic_name}/1-0", b"7")

        exported = tmp_path / "src.txt"
        result = cli(kafka_zk, "offsets", "export", "--group", "src", "--output", str(exported))
        assert (result.returncode, result.stdout) == (0, f"exported 2 offsets of 1 group to {exported}\n")
        assert exported.read_text() == (f"/consumers/src/offsets/{topic_name}/0:3\n"
                                        f"/consumers/src/offsets/{topic_name}/1:2\n")
        assert result.stderr.splitlines() == [
            f"warning: znode /consumers/src/offsets/{topic_name}/1-0 cannot be imported again: partition '1-0' in "
            f"'/consumers/src/offsets/{topic_name}/1-0' is not a partition number; skipped",
            f"warning: znode /consumers/src/offsets/{topic_name}-x/0 holds 'oops', expected a decimal offset; skipped",
        ]

        # Into another group: created with its parents; then updated.
        copy = tmp_path / "dst.txt"
        copy.write_text(exported.read_text().replace("/consumers/src/", "/consumers/dst/"))
        imported = cli(kafka_zk, "offsets", "import", "--input", str(copy))
        assert (imported.returncode, imported.stderr) == (0, "")
        assert imported.stdout == "imported 2 offsets of 1 group (2 created, 0 updated)\n"
        assert offsets(zk, "dst", topic_name) == {"0": b"3", "1": b"2"}
        copy.write_text(f"/consumers/dst/offsets/{topic_name}/0:1\n/consumers/dst/offsets/{topic_name}/1:-1\n")
        again = cli(kafka_zk, "offsets", "import", "--input", str(copy))
        assert again.stdout == "imported 2 offsets of 1 group (0 created, 2 updated)\n"
        assert offsets(zk, "dst", topic_name) == {"0": b"1", "1": b"-1"}

        # Every group by default, groups in order; to stdout.
        everything = cli(kafka_zk, "offsets", "export")
        assert everything.returncode == 0
        dst_lines = f"/consumers/dst/offsets/{topic_name}/0:1\n/consumers/dst/offsets/{topic_name}/1:-1\n"
        assert everything.stdout == dst_lines + exported.read_text()

        # The live group: warned about, and a dry run writes nothing. Partition 5, which the topic does not have,
        # is refused without --force (nothing written) and written with it, with a warning.
        live = tmp_path / "live.txt"
        live.write_text(f"/consumers/src/offsets/{topic_name}/0:0\n/consumers/src/offsets/{topic_name}/5:9\n")
        refused = cli(kafka_zk, "offsets", "import", "--input", str(live))
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr == (f"zkconsumer offsets: /consumers/src/offsets/{topic_name}/5: topic {topic_name} "
                                  f"has 2 partitions, not partition 5; nothing was written (--force writes anyway)\n")
        dry = cli(kafka_zk, "offsets", "import", "--input", str(live), "--dry-run", "--force")
        assert dry.returncode == 0
        assert dry.stderr == (f"warning: /consumers/src/offsets/{topic_name}/5: topic {topic_name} has 2 partitions, "
                              f"not partition 5; written anyway (--force)\n"
                              "warning: group src has 1 live member (src_c1); their next commit may overwrite the "
                              "imported offsets\n")
        assert dry.stdout.splitlines() == [
            f"would set /consumers/src/offsets/{topic_name}/0:0 (now 3)",
            f"would create /consumers/src/offsets/{topic_name}/5:9",
            "dry run: 2 offsets of 1 group; nothing written",
        ]
        assert offsets(zk, "src", topic_name) == {"0": b"3", "1": b"2", "1-0": b"7"}
        written = cli(kafka_zk, "offsets", "import", "--input", str(live), "--force")
        assert written.returncode == 0 and written.stderr == dry.stderr
        assert offsets(zk, "src", topic_name)["5"] == b"9"
    finally:
        connector.shutdown()


def test_import_refuses_a_malformed_file_whole(zk, zk_chroot, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("/consumers/x/offsets/t/0:5\n"
                   "/consumers/x/offsets/t/1:6\n"
                   "/consumers/x/offsets/t/zero:5\n"
                   "/consumers/x/offsets/t/2:1.5\n"
                   "\n"
                   "anything after the first empty line is not read\n")
    result = cli(zk_chroot, "offsets", "import", "--input", str(bad))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == ("zkconsumer offsets: line 3: partition 'zero' in '/consumers/x/offsets/t/zero' is not a "
                             "partition number (and 1 more bad line); nothing was written\n")
    assert zk.exists("/consumers/x") is None

    good = tmp_path / "good.txt"
    good.write_text("/consumers/x/offsets/t/0:5\r\n/consumers/x/offsets/t/1:6\n\nnot read\n")
    assert cli(zk_chroot, "offsets", "import", "--input", str(good)).returncode == 0
    assert offsets(zk, "x", "t") == {"0": b"5", "1": b"6"}

    missing = cli(zk_chroot, "offsets", "import", "--input", str(tmp_path / "nope.txt"))
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"zkconsumer offsets: cannot read {tmp_path / 'nope.txt'}: No such file or directory\n"


@pytest.mark.parametrize(("line", "problem"), [
    ("/consumers/g/offsets/t/0", "'/consumers/g/offsets/t/0' is not PATH:OFFSET"),
    ("/consumers/g/owners/t/0:1", "path '/consumers/g/owners/t/0' is not /consumers/<group>/offsets/<topic>/<p"),
    ("consumers/g/offsets/t/0:1", "is not /consumers/<group>/offsets/<topic>/<partition>"),
    ("/consumers/g/offsets/t/0/x:1", "is not /consumers/<group>/offsets/<topic>/<partition>"),
    ("/consumers//offsets/t/0:1", "group '' in"),
    ("/consumers/g/offsets/t t/0:1", "topic 't t' in"),
    ("/consumers/g/offsets/t/01:1", "partition '01' in"),
    ("/consumers/g/offsets/t/-1:1", "partition '-1' in"),
    ("/consumers/g/offsets/t/0:", "offset '' of"),
    ("/consumers/g/offsets/t/0:1e3", "offset '1e3' of"),
    ("/consumers/g/offsets/t/0:9223372036854775808", "offset '9223372036854775808' of"),
])
def test_a_malformed_offsets_line_is_refused_naming_the_problem(line, problem):
    with pytest.raises(ValueError) as raised:
        parse_line(line)
    assert problem in str(raised.value)


def test_file_format_round_trip_and_duplicates():
    entries = [OffsetEntry("a:b", "t.1_x-y", 0, -1), OffsetEntry("g", "t", 2147483647, 9223372036854775807)]
    text = format_lines(entries)
    assert text == "/consumers/a:b/offsets/t.1_x-y/0:-1\n/consumers/g/offsets/t/2147483647:9223372036854775807\n"
    assert parse_offsets_file(text) == entries
    with pytest.raises(OffsetsFileError, match=r"^line 3: /consumers/g/offsets/t/0 again \(first on line 1\)"):
        parse_offsets_file("/consumers/g/offsets/t/0:1\n/consumers/g/offsets/t/1:1\n/consumers/g/offsets/t/0:2\n")
    assert parse_offsets_file("") == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_counts_every_n_offsets_or_in_place_on_a_terminal():
    pipe = io.StringIO()
    progress = Progress(pipe, every=1000)
    for count in (500, 1000, 1500):
        progress.update(count)
    progress.group_done(1500)
    progress.update(600)
    progress.finish()
    assert pipe.getvalue() == "exported 1000 offsets so far\nexported 2100 offsets so far\n"
    terminal = _Terminal()
    progress = Progress(terminal)
    progress.update(500)
    progress.finish()
    assert terminal.getvalue() == "\rexported 500 offsets\r\033[K"


def test_import_writes_large_groups_in_several_transactions(zk):
    zk.create("/consumers/g/offsets/t/1", b"garbage", makepath=True)
    entries = [OffsetEntry("g", "t", p, 10 + p) for p in range(5)] + [OffsetEntry("h", "u", 0, 7)]
    assert [w.current for w in plan_import(zk, entries)] == [None, "garbage", None, None, None, None]
    result = apply_import(zk, entries, max_ops=2)
    assert (result.created, result.updated, result.groups) == (5, 1, ("g", "h"))
    assert offsets(zk, "g", "t") == {str(p): str(10 + p).encode() for p in range(5)}
    assert offsets(zk, "h", "u") == {"0": b"7"}


def test_import_checks_topics_partitions_and_offsets_against_zookeeper(zk, kafka_zk, bootstrap_servers, topic_name,
                                                                        tmp_path):
    """The issue's three cases: a topic that does not exist, partition 7 of a 3-partition topic, offset -5. Each is
    refused in one line and nothing of the file is written; --force writes them; -1 ("no offset") is accepted."""
    create_topic(bootstrap_servers, topic_name, 3)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}"))
    good = f"/consumers/imp/offsets/{topic_name}/0:4\n/consumers/imp/offsets/{topic_name}/1:-1\n"
    cases = {
        "/consumers/imp/offsets/no-such-topic/0:1\n":
            "/consumers/imp/offsets/no-such-topic/0: topic no-such-topic does not exist (no znode "
            "/brokers/topics/no-such-topic)",
        f"/consumers/imp/offsets/{topic_name}/7:1\n":
            f"/consumers/imp/offsets/{topic_name}/7: topic {topic_name} has 3 partitions, not partition 7",
        f"/consumers/imp/offsets/{topic_name}/2:-5\n":
            f"/consumers/imp/offsets/{topic_name}/2: offset -5 is below -1 (the legacy consumer's \"no offset\")",
    }
    for line, problem in cases.items():
        bad = tmp_path / "bad.txt"
        bad.write_text(good + line)
        refused = cli(kafka_zk, "offsets", "import", "--input", str(bad))
        assert (refused.returncode, refused.stdout) == (1, ""), line
        assert refused.stderr.splitlines() == [
            f"zkconsumer offsets: {problem}; nothing was written (--force writes anyway)"]
        assert zk.exists("/consumers/imp") is None
    every = tmp_path / "every.txt"
    every.write_text(good + "".join(cases))
    refused = cli(kafka_zk, "offsets", "import", "--input", str(every), "--json")
    assert refused.returncode == 1 and refused.stderr.strip().endswith("(and 2 more); nothing was written (--force "
                                                                       "writes anyway)")
    forced = cli(kafka_zk, "offsets", "import", "--input", str(every), "--force")
    assert forced.returncode == 0, forced.stderr
    assert [line.split(": ", 1)[1] for line in forced.stderr.splitlines()] == [
        f"{problem}; written anyway (--force)" for problem in cases.values()]
    assert offsets(zk, "imp", topic_name) == {"0": b"4", "1": b"-1", "2": b"-5", "7": b"1"}

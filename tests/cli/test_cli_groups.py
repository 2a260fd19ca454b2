"""``zkconsumer groups list|describe|verify`` against a real group of zkconsumer connectors, ZooKeeper and broker:
ConsumerOffsetChecker's values and format, VerifyConsumerRebalance's verdicts, and one-line failures."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from support import mirrored_topic, produce, produce_batched, take, wait_for, zkconsumer_cli

from zkconsumer import ConsumerConfig, create_connector
from zkconsumer.tools.offset_checker import HEADER, ROW_FORMAT
from zkconsumer.tools.verify_rebalance import FAILURE, SUCCESS, check_ownership

GROUP = "group1"


def config(zk_connect: str, consumer_id: str) -> ConsumerConfig:
    return ConsumerConfig({
        "zookeeper.connect": zk_connect, "group.id": GROUP, "consumer.id": consumer_id,
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200, "rebalance.backoff.ms": 200,
        "refresh.leader.backoff.ms": 100,
    })


def owners(zk, topic: str) -> dict[str, str]:
    base = f"/consumers/{GROUP}/owners/{topic}"
    if not zk.exists(base):
        return {}
    return {p: zk.get(f"{base}/{p}")[0].decode() for p in zk.get_children(base)}


def cli(zk_connect: str, *args: str):
    return zkconsumer_cli(*args, "--zookeeper", zk_connect)


def test_describe_and_verify_a_live_group(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    produce(bootstrap_servers, topic, [f"p0-{i}".encode() for i in range(5)], partition=0, batch_each=True)
    produce(bootstrap_servers, topic, [f"p1-{i}".encode() for i in range(3)], partition=1, batch_each=True)
    one = create_connector(config(kafka_zk, "c1"))
    two = create_connector(config(kafka_zk, "c2"))
    try:
        stream1 = one.create_message_streams({topic: 1})[topic][0]
        stream2 = two.create_message_streams({topic: 1})[topic][0]
        wait_for(lambda: owners(zk, topic) == {"0": "group1_c1-0", "1": "group1_c2-0"})
        got1, got2 = take(stream1, 3), take(stream2, 1)
        assert [m.partition for m in got1] == [0, 0, 0] and [m.partition for m in got2] == [1]
        one.commit_offsets()
        two.commit_offsets()
        zk.ensure_path("/consumers/a-group")

        listed = cli(kafka_zk, "groups", "list")
        assert (listed.returncode, listed.stdout, listed.stderr) == (0, "a-group\ngroup1\n", "")

        expected = [
            {"group": GROUP, "topic": topic, "partition": 0, "offset": 3, "log_size": 5, "lag": 2,
             "owner": "group1_c1-0"},
            {"group": GROUP, "topic": topic, "partition": 1, "offset": 1, "log_size": 3, "lag": 2,
             "owner": "group1_c2-0"},
        ]
        # log sizes from the brokers registered in ZooKeeper, and from the one given
        described = cli(kafka_zk, "groups", "describe", "--group", GROUP, "--json")
        assert (described.returncode, described.stderr) == (0, "")
        assert json.loads(described.stdout) == expected
        given = cli(kafka_zk, "groups", "describe", "--group", GROUP, "--json", "--bootstrap-server",
                    bootstrap_servers)
        assert json.loads(given.stdout) == expected

        table = cli(kafka_zk, "groups", "describe", "--group", GROUP)
        assert (table.returncode, table.stderr) == (0, "")
        assert table.stdout.splitlines() == [
            "Group           Topic                          Pid Offset          logSize         Lag             Owner",
            ROW_FORMAT % (GROUP, topic, 0, 3, 5, 2, "group1_c1-0"),
            ROW_FORMAT % (GROUP, topic, 1, 1, 3, 2, "group1_c2-0"),
        ]
        assert table.stdout.splitlines()[0] == HEADER

        verified = cli(kafka_zk, "groups", "verify", "--group", GROUP)
        assert (verified.returncode, verified.stdout, verified.stderr) == (0, f"{SUCCESS}\n", "")

        # An owner znode deleted by hand (nothing in the legacy consumer watches it), then one held by a stranger.
        owner1 = f"/consumers/{GROUP}/owners/{topic}/1"
        zk.delete(owner1)
        missing = cli(kafka_zk, "groups", "verify", "--group", GROUP)
        assert missing.returncode == 1
        assert missing.stdout == f"No owner for partition [{topic},1]\n{FAILURE}\n"
        zk.create(owner1, b"intruder_x-0")
        bogus = cli(kafka_zk, "groups", "verify", "--group", GROUP)
        assert bogus.returncode == 1
        assert bogus.stdout == (f"Owner intruder_x-0 for partition [{topic},1] is not a valid member of consumer "
                                f"group {GROUP}\n{FAILURE}\n")
        shown = json.loads(cli(kafka_zk, "groups", "describe", "--group", GROUP, "--json").stdout)
        assert [row["owner"] for row in shown] == ["group1_c1-0", "intruder_x-0"]
        zk.delete(owner1)
    finally:
        two.shutdown()
        one.shutdown()


def test_describe_unknown_offsets_owner_only_topics_and_no_broker(zk, kafka_zk, bootstrap_servers, topic_name):
    """Offsets missing, -1 and malformed; a topic the group only owns; a group with no members at all."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 3)
    owned = mirrored_topic(zk, bootstrap_servers, f"{topic_name}-o", 1)
    produce(bootstrap_servers, topic, [b"a", b"b"], partition=2, batch_each=True)
    offsets = f"/consumers/g2/offsets/{topic}"
    zk.create(f"{offsets}/0", b"not-a-number", makepath=True)
    zk.create(f"{offsets}/1", b"-1")
    zk.create(f"/consumers/g2/owners/{owned}/0", b"g2_gone-0", makepath=True)

    result = cli(kafka_zk, "groups", "describe", "--group", "g2", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == [
        {"group": "g2", "topic": topic, "partition": 0, "offset": None, "log_size": 0, "lag": None, "owner": None},
        {"group": "g2", "topic": topic, "partition": 1, "offset": -1, "log_size": 0, "lag": None, "owner": None},
        {"group": "g2", "topic": topic, "partition": 2, "offset": None, "log_size": 2, "lag": None, "owner": None},
        {"group": "g2", "topic": owned, "partition": 0, "offset": None, "log_size": 0, "lag": None,
         "owner": "g2_gone-0"},
    ]
    assert result.stderr == f"warning: znode {offsets}/0 holds 'not-a-number', expected a decimal offset\n"

    table = cli(kafka_zk, "groups", "describe", "--group", "g2", "--bootstrap-server", "127.0.0.1:1",
                "--socket-timeout-ms", "500")
    assert table.returncode == 0
    assert table.stdout.splitlines()[1:] == [
        ROW_FORMAT % ("g2", topic, 0, "unknown", "unknown", "unknown", "none"),
        ROW_FORMAT % ("g2", topic, 1, -1, "unknown", "unknown", "none"),
        ROW_FORMAT % ("g2", topic, 2, "unknown", "unknown", "unknown", "none"),
        ROW_FORMAT % ("g2", owned, 0, "unknown", "unknown", "unknown", "g2_gone-0"),
    ]
    warnings = table.stderr.splitlines()
    assert len(warnings) == 2 and warnings[1].startswith("warning: logSize unknown: no broker answered at 127.0.0.1:1")

    # No members, so nothing to verify; a malformed registration is a problem named by its path.
    assert cli(kafka_zk, "groups", "verify", "--group", "g2").stdout == f"{SUCCESS}\n"
    zk.create("/consumers/g2/ids/g2_broken", b"{not json", makepath=True)
    broken = cli(kafka_zk, "groups", "verify", "--group", "g2")
    assert broken.returncode == 1
    lines = broken.stdout.splitlines()
    assert lines[0].startswith("Malformed znode /consumers/g2/ids/g2_broken: is not valid JSON")
    assert lines[1:] == [FAILURE]


def test_verify_expands_wildcards_and_reports_topics_without_owners(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, f"{topic_name}-w", 2)
    registration = b'{"version":1,"subscription":{"%s-w.*":1},"pattern":"white_list","timestamp":"1"}'
    zk.create("/consumers/g3/ids/g3_w", registration % topic_name.encode(), makepath=True, ephemeral=True)
    result = cli(kafka_zk, "groups", "verify", "--group", "g3")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"No owners for any partitions for topic {topic}",
        f"No owner for partition [{topic},0]",
        f"No owner for partition [{topic},1]",
        FAILURE,
    ]
    zk.create(f"/consumers/g3/owners/{topic}/0", b"g3_w-0", makepath=True)
    zk.create(f"/consumers/g3/owners/{topic}/1", b"g3_w-0")
    assert cli(kafka_zk, "groups", "verify", "--group", "g3").stdout == f"{SUCCESS}\n"


def test_check_ownership_rules():
    threads = {"t": ["g_a-0", "g_b-0"], "gone": ["g_a-0"]}
    partitions = {"t": [0, 1, 2, 3], "gone": []}
    owners = {"t": {0: "g_a-0", 1: "g_b-0", 2: "", 3: "g_old-0"}}
    assert check_ownership("g", threads, partitions, owners) == [
        "No owner for partition [t,2]",
        "Owner g_old-0 for partition [t,3] is not a valid member of consumer group g",
    ]


def test_missing_group_and_unreachable_zookeeper_are_one_line(zk, zk_chroot, tmp_path):
    zk.ensure_path("/consumers")
    (tmp_path / "offsets.txt").write_text("/consumers/g/offsets/t/0:5\n")
    missing = [["groups", "describe"], ["groups", "verify"], ["offsets", "export"]]
    unreachable = [["groups", "list"], ["groups", "describe", "--group", "g"], ["groups", "verify", "--group", "g"],
                   ["offsets", "export"], ["offsets", "import", "--input", str(tmp_path / "offsets.txt")]]
    with ThreadPoolExecutor(len(missing) + len(unreachable)) as pool:
        missing_results = pool.map(lambda c: cli(zk_chroot, *c, "--group", "nope"), missing)
        results = pool.map(lambda c: cli("127.0.0.1:1", *c), unreachable)
        for command, result in zip(missing, missing_results, strict=True):
            assert (result.returncode, result.stdout) == (1, ""), command
            assert result.stderr == (f"zkconsumer {command[0]}: consumer group 'nope' does not exist "
                                     "(no znode /consumers/nope)\n")
    for command, result in zip(unreachable, results, strict=True):
        assert result.returncode == 1, command
        assert result.stderr.count("\n") == 1 and "ZooKeeper at 127.0.0.1:1 did not answer" in result.stderr, command


def test_describe_shows_the_true_log_size_and_lag_whatever_the_batching(zk, kafka_zk, bootstrap_servers, topic_name):
    """An ordinary batching producer on the embedded broker: logSize is the number of messages produced and lag what
    the group has not consumed, for a single message, several batches and one batch of many."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 4)
    produced = {0: 1, 1: 37, 2: 500, 3: 1_200}
    committed = {0: 0, 1: 10, 2: 250, 3: 1_200}
    for partition, count in produced.items():
        produce_batched(bootstrap_servers, topic, partition, count, linger_ms=200 if partition == 2 else 5,
                        batch_messages=250 if partition == 3 else 10_000)
    for partition, offset in committed.items():
        zk.create(f"/consumers/g-batched/offsets/{topic}/{partition}", str(offset).encode(), makepath=True)

    described = cli(kafka_zk, "groups", "describe", "--group", "g-batched", "--json")
    assert (described.returncode, described.stderr) == (0, "")
    rows = {row["partition"]: row for row in json.loads(described.stdout)}
    assert {p: rows[p]["log_size"] for p in produced} == produced
    assert {p: rows[p]["lag"] for p in produced} == {p: produced[p] - committed[p] for p in produced}
    table = cli(kafka_zk, "groups", "describe", "--group", "g-batched").stdout.splitlines()
    assert table[3] == ROW_FORMAT % ("g-batched", topic, 2, 250, 500, 250, "none")


def test_a_chroot_that_does_not_exist_is_one_line(zookeeper_connect, capfd):
    """Not kazoo's UserWarning and an empty answer with exit 0: the tools and the console consumer say it (in-process,
    where a warning would reach the captured stderr just the same)."""
    from zkconsumer.cli import main

    connect = f"{zookeeper_connect}/no-such-chroot-here"
    for argv in (["groups", "list"], ["topics", "describe"], ["offsets", "export"], ["consume", "--topic", "t"]):
        status = main([*argv, "--zookeeper", connect])
        out, err = capfd.readouterr()
        assert (status, out) == (1, ""), argv
        assert err.splitlines() == [
            f"zkconsumer {argv[0]}: ZooKeeper at {connect}: the chroot /no-such-chroot-here does not exist; check "
            f"the connect string, or create it first"], argv

"""``zkconsumer topics place|create|alter|describe`` on the ZooKeeper path (kafka-topics.sh --zookeeper of Kafka 0.10):
output, znodes written byte for byte, every bad input one line with nothing written, and a topic created through
ZooKeeper left alone by the metadata bridge."""

from __future__ import annotations

import json

import pytest
from support import wait_for, zkconsumer_cli

from zkconsumer import cli
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.cluster import BrokerInfo
from zkconsumer.zk.reads import children

# Kafka's AdminRackAwareTest cluster: six brokers on three racks
RACKS = "0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["topics", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def register(zk, racks: dict[int, str | None]) -> None:
    for broker, rack in racks.items():
        info = BrokerInfo(broker, f"b{broker}", 9092, rack=rack)
        zk.create(paths.broker_path(broker), cluster.encode_broker(info), makepath=True)


def tree(zk, path: str = "/") -> dict[str, bytes]:
    """Every znode under ``path`` with its data: what "nothing written" is compared on."""
    nodes = {}
    for child in zk.get_children(path):
        full = f"{path.rstrip('/')}/{child}"
        nodes[full] = zk.get(full)[0]
        nodes |= tree(zk, full)
    return nodes


# --- place: no server -------------------------------------------------------------------------------------------


def test_place_json_is_kafka_s_rack_aware_placement(capsys):
    status, out, err = run(capsys, "place", "--brokers", "0,1,2,3,4,5", "--racks", RACKS, "--partitions", "6",
                           "--replication-factor", "3", "--start-index", "0", "--json")
    assert status == 0 and err == ""
    # AdminRackAwareTest.testAssignmentWithRackAware
    assert json.loads(out) == {"assignment": {"0": [0, 3, 1], "1": [3, 1, 5], "2": [1, 5, 4], "3": [5, 4, 2],
                                              "4": [4, 2, 0], "5": [2, 0, 3]}}
    assert list(json.loads(out)["assignment"]) == ["0", "1", "2", "3", "4", "5"]


def test_place_text_shows_the_walk_and_the_counts(capsys):
    status, out, _ = run(capsys, "place", "--brokers", "0,1,2,3", "--partitions", "4", "--replication-factor", "2",
                         "--start-index", "1", "--start-partition-id", "4")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "brokers walked in id order: 0, 1, 2, 3"
    assert lines[1] == "start index and first shift fixed at 1"
    # ids from 4: the shift has grown once (4 wraps the four brokers)
    assert lines[4:8] == ["        4  1,0", "        5  2,1", "        6  3,2", "        7  0,3"]
    assert lines[-4:] == ["     0  -               1         2", "     1  -               1         2",
                          "     2  -               1         2", "     3  -               1         2"]


def test_place_with_a_seed_repeats_itself(capsys):
    argv = ("place", "--brokers", "1,2,3,4,5", "--partitions", "10", "--replication-factor", "3", "--seed", "42",
            "--json")
    first, second = run(capsys, *argv)[1], run(capsys, *argv)[1]
    assert first == second
    leaders = [replicas[0] for replicas in json.loads(first)["assignment"].values()]
    assert sorted(leaders) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


@pytest.mark.parametrize(("argv", "message"), [
    (["--racks", "0:r1,9:r2"], "--racks names broker 9, which is not in --brokers"),
    (["--racks", "0:r1,1:r2"], "Not all brokers have rack information. Add --disable-rack-aware"),
    (["--replication-factor", "4"], "replication factor: 4 larger than available brokers: 3"),
    (["--partitions", "0"], "number of partitions must be larger than 0"),
])
def test_place_refuses_bad_input_in_one_line(capsys, argv, message):
    base = {"--brokers": "0,1,2", "--partitions": "3", "--replication-factor": "2"}
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        base[flag] = value
    status, out, err = run(capsys, "place", *[x for pair in base.items() for x in pair])
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err


# --- the broker path keeps its options ----------------------------------------------------------------------------


def test_zookeeper_options_without_zookeeper_are_refused_before_any_server(capsys):
    status, _, err = run(capsys, "create", "t", "--partitions", "1", "--config", "retention.ms=1",
                         "--bootstrap-server", "127.0.0.1:1")
    assert status == 2 and err.splitlines() == ["zkconsumer topics: --config needs --zookeeper (the broker's admin "
                                                "API places the replicas itself)"]
    status, _, err = run(capsys, "alter", "t", "--partitions", "2", "--zookeeper", "127.0.0.1:1",
                         "--bootstrap-server", "127.0.0.1:1")
    assert status == 2 and "give --zookeeper or --bootstrap-server, not both" in err


def test_the_broker_path_still_requires_partitions(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["topics", "create", "t", "--bootstrap-server", "127.0.0.1:1"])
    assert exit_.value.code == 2
    assert "the following arguments are required: --partitions" in capsys.readouterr().err


# --- create, alter, describe through ZooKeeper -----------------------------------------------------------------------


def test_create_writes_what_kafka_topics_wrote(zk, zk_chroot, capsys):
    register(zk, {0: None, 1: None, 2: None})
    status, out, err = run(capsys, "create", "orders", "--zookeeper", zk_chroot, "--replica-assignment",
                           "0:1, 1:2,2:0", "--config", "cleanup.policy=compact", "--config", "retention.ms = 5000")
    assert (status, out, err) == (0, 'Created topic "orders".\n', "")
    assert zk.get("/brokers/topics/orders")[0] == b'{"version":1,"partitions":{"0":[0,1],"1":[1,2],"2":[2,0]}}'
    assert zk.get("/config/topics/orders")[0] == \
        b'{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"5000"}}'


def test_create_places_on_the_registered_racks(zk, zk_chroot, capsys):
    register(zk, {int(b): r for b, r in (e.split(":") for e in RACKS.split(","))})
    status, _, _ = run(capsys, "create", "racked", "--zookeeper", zk_chroot, "--partitions", "6",
                       "--replication-factor", "3")
    assert status == 0
    racks = {b: r for b, r in (e.split(":") for e in RACKS.split(","))}
    replicas = cluster.read_topic(zk, "racked").replicas
    assert sorted(replicas) == list(range(6))
    assert all(len({racks[str(b)] for b in r}) == 3 for r in replicas.values())
    assert sorted(r[0] for r in replicas.values()) == list(range(6))  # each broker leads one partition


def test_dry_run_prints_the_znodes_and_writes_nothing(zk, zk_chroot, capsys):
    register(zk, {0: None, 1: None})
    before = tree(zk)
    status, out, _ = run(capsys, "create", "dry", "--zookeeper", zk_chroot, "--replica-assignment", "1:0",
                         "--dry-run")
    assert status == 0
    assert out.splitlines() == ['would write /config/topics/dry {"version":1,"config":{}}',
                                'would write /brokers/topics/dry {"version":1,"partitions":{"0":[1,0]}}']
    assert tree(zk) == before


def test_alter_adds_partitions_continuing_the_placement(zk, zk_chroot, capsys):
    register(zk, {0: None, 1: None, 2: None, 3: None})
    assert run(capsys, "create", "grow", "--zookeeper", zk_chroot, "--replica-assignment", "1:2,2:3")[0] == 0
    status, out, err = run(capsys, "alter", "grow", "--zookeeper", zk_chroot, "--partitions", "5")
    assert status == 0 and out == "Adding partitions succeeded!\n"
    assert err.startswith("WARNING: If partitions are increased")
    assert zk.get("/brokers/topics/grow")[0] == \
        b'{"version":1,"partitions":{"0":[1,2],"1":[2,3],"2":[3,1],"3":[0,2],"4":[1,0]}}'
    status, out, _ = run(capsys, "alter", "grow", "--zookeeper", zk_chroot, "--partitions", "6",
                         "--replica-assignment", "1:2,2:3,3:1,0:2,1:0,3:0")
    assert status == 0
    assert cluster.read_topic(zk, "grow").replicas[5] == (3, 0)
    status, out, _ = run(capsys, "describe", "grow", "--zookeeper", zk_chroot)
    assert status == 0
    assert out.splitlines()[0] == "Topic:grow\tPartitionCount:6\tReplicationFactor:2\tConfigs:"
    assert out.splitlines()[6] == "\tTopic: grow\tPartition: 5\tLeader: none\tReplicas: 3,0\tIsr: "


CREATE_ERRORS = [
    (["bad/name", "--partitions", "1", "--replication-factor", "1"], 2,
     "illegal topic name 'bad/name': it contains a character other than ASCII alphanumerics, '.', '_' and '-'"),
    (["taken", "--partitions", "1", "--replication-factor", "1"], 1, 'Topic "taken" already exists.'),
    (["my_topic", "--partitions", "1", "--replication-factor", "1"], 1,
     'Topic "my_topic" collides with existing topics: my.topic'),
    (["t", "--replica-assignment", "0:x"], 2, "--replica-assignment: partition 0 ('0:x') is not a colon-separated"),
    (["t", "--replica-assignment", "0:0"], 2, "Partition replica lists may not contain duplicate entries: 0"),
    (["t", "--replica-assignment", "0:7"], 2, "some specified brokers not available"),
    (["t", "--replica-assignment", "0:1,1"], 2, "Partition 1 has different replication factor: [1]"),
    (["t", "--replica-assignment", "0:1,1:0", "--partitions", "3"], 2,
     "--partitions 3 disagrees with --replica-assignment, which lists 2 partitions"),
    (["t", "--replica-assignment", "0:1", "--replication-factor", "1"], 2,
     "--replication-factor 1 disagrees with --replica-assignment"),
    (["t", "--partitions", "2"], 2, "--partitions and --replication-factor are required"),
    (["t", "--partitions", "2", "--replication-factor", "3"], 2, "replication factor: 3 larger than available"),
    (["t", "--partitions", "1", "--replication-factor", "1", "--config", "retention=1"], 2,
     "Unknown configuration `retention`."),
    (["t", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms"], 2,
     "Invalid topic config 'retention.ms'"),
    (["t", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms=abc"], 2,
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
]


@pytest.mark.parametrize(("argv", "status", "message"), CREATE_ERRORS, ids=[m[:30] for _, _, m in CREATE_ERRORS])
def test_create_refuses_bad_input_in_one_line_writing_nothing(zk, zk_chroot, capsys, argv, status, message):
    register(zk, {0: None, 1: None})
    for existing in ("taken", "my.topic"):
        assert run(capsys, "create", existing, "--zookeeper", zk_chroot, "--replica-assignment", "0")[0] == 0
    before = tree(zk)
    got, out, err = run(capsys, "create", *argv, "--zookeeper", zk_chroot)
    assert (got, out) == (status, "")
    lines = [line for line in err.splitlines() if not line.startswith("WARNING: Due to limitations")]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err
    assert tree(zk) == before


def test_create_without_brokers_is_refused(zk, zk_chroot, capsys):
    zk.ensure_path("/brokers/ids")
    status, out, err = run(capsys, "create", "t", "--zookeeper", zk_chroot, "--partitions", "1",
                           "--replication-factor", "1")
    assert (status, out) == (1, "")
    assert err.splitlines() == ["zkconsumer topics: no broker is registered under /brokers/ids: start the brokers "
                                "(or the bridge) before placing replicas on them"]
    assert tree(zk) == {"/brokers": b"", "/brokers/ids": b""}


@pytest.mark.parametrize(("argv", "status", "message"), [
    (["--partitions", "2"], 2, "The number of partitions for a topic can only be increased"),
    (["--partitions", "3", "--replica-assignment", "0:1,1:0,0"], 2, "Partition 2 has different replication factor"),
    (["--partitions", "3", "--replica-assignment", "0:1,1:0,5:0"], 2, "some specified brokers not available"),
    (["--partitions", "3", "--replica-assignment", "1:0,1:0,0:1"], 2, "adding partitions cannot move existing ones"),
])
def test_alter_refuses_bad_input_in_one_line_writing_nothing(zk, zk_chroot, capsys, argv, status, message):
    register(zk, {0: None, 1: None})
    assert run(capsys, "create", "t", "--zookeeper", zk_chroot, "--replica-assignment", "0:1,1:0")[0] == 0
    before = tree(zk)
    got, out, err = run(capsys, "alter", "t", "--zookeeper", zk_chroot, *argv)
    assert (got, out) == (status, "")
    assert len(err.splitlines()) == 1 and message in err
    assert tree(zk) == before
    missing = run(capsys, "alter", "nope", "--zookeeper", zk_chroot, "--partitions", "3")
    assert missing[0] == 1 and missing[2].splitlines() == [
        "zkconsumer topics: Topic nope does not exist (no znode /brokers/topics/nope)"]


# --- beside the metadata bridge -------------------------------------------------------------------------------------


def test_the_bridge_leaves_a_topic_created_through_zookeeper_as_written(zk, kafka_zk, bootstrap_servers, topic_name):
    # in child processes: in this one the bridge's thread logs to the stdout the command configures
    wait_for(lambda: children(zk, paths.BROKER_IDS_PATH))
    broker = int(children(zk, paths.BROKER_IDS_PATH)[0])
    name = f"zk-{topic_name}"
    created = zkconsumer_cli("topics", "create", name, "--zookeeper", kafka_zk, "--partitions", "3",
                             "--replication-factor", "1", "--config", "retention.ms=60000")
    assert created.returncode == 0 and created.stdout == f'Created topic "{name}".\n', created.stderr
    written = {path: zk.get(path) for path in (paths.topic_path(name), paths.topic_config_path(name))}
    assert written[paths.topic_path(name)][0] == \
        f'{{"version":1,"partitions":{{"0":[{broker}],"1":[{broker}],"2":[{broker}]}}}}'.encode()
    # a topic made on the broker afterwards shows that the bridge has run a pass since; a second one, made once the
    # first is mirrored, that it has run another
    for marker in (topic_name, f"{topic_name}-again"):
        create_topic(bootstrap_servers, marker, 1)
        wait_for(lambda marker=marker: zk.exists(paths.partition_state_path(marker, 0)))
    assert {path: zk.get(path) for path in written} == written  # same data, same znode version
    assert zk.get_children(paths.topic_path(name)) == []
    assert zkconsumer_cli("topics", "describe", name, "--zookeeper", kafka_zk).stdout.splitlines()[1:2] == \
        [f"\tTopic: {name}\tPartition: 0\tLeader: none\tReplicas: {broker}\tIsr: "]


def test_if_not_exists_leaves_an_existing_topic_as_it_is(zk, zk_chroot, bootstrap_servers, topic_name, capsys):
    register(zk, {0: None})
    assert run(capsys, "create", "orders", "--zookeeper", zk_chroot, "--partitions", "2", "--replication-factor",
               "1")[0] == 0
    written = zk.get("/brokers/topics/orders")[0]
    again = run(capsys, "create", "orders", "--zookeeper", zk_chroot, "--partitions", "5", "--replication-factor",
                "1", "--if-not-exists")
    assert again == (0, 'Topic "orders" already exists; left as it is.\n', "")
    assert zk.get("/brokers/topics/orders")[0] == written
    assert run(capsys, "create", "orders", "--zookeeper", zk_chroot, "--partitions", "2", "--replication-factor",
               "1")[0] != 0  # without the option it is still an error
    # Through the broker: created once, then left as it is.
    through_broker = ("create", topic_name, "--bootstrap-server", bootstrap_servers, "--partitions", "2",
                      "--if-not-exists")
    assert run(capsys, *through_broker)[0:2] == (0, f"created topic {topic_name} with 2 partitions at "
                                                    f"{bootstrap_servers}\n")
    assert run(capsys, *through_broker)[0:2] == (0, f"topic {topic_name} already exists at {bootstrap_servers}; "
                                                    f"left as it is\n")

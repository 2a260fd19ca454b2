"""Readers of /brokers on real znodes: every broker JSON version, topics, partition states, and bad data."""

from __future__ import annotations

import pytest

from zkconsumer.errors import ZnodeFormatError, ZnodeMissingError
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.cluster import BrokerEndpoint, BrokerInfo, PartitionState, TopicAssignment

BROKERS = {
    # version 1 (0.8.x): host and port only, keys in hash order
    1: b'{"jmx_port":-1,"timestamp":"1466462213254","host":"h1","version":1,"port":9092}',
    # version 2 (0.9): endpoints become authoritative (host/port may disagree)
    2: b'{"jmx_port":9999,"timestamp":"1466462213255","endpoints":["SSL://h2:9093","PLAINTEXT://h2:9092"],'
       b'"host":"stale","version":2,"port":1}',
    # version 3 (0.10): optional rack
    3: b'{"jmx_port":-1,"timestamp":"1466462213256","endpoints":["PLAINTEXT://h3:9094"],"rack":"r1",'
       b'"host":"h3","version":3,"port":9094}',
    # version 4 (0.11+): endpoints named by listener, mapped to a protocol
    4: b'{"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"SSL"},'
       b'"endpoints":["EXTERNAL://e4:9093","INTERNAL://[::1]:9095"],"jmx_port":-1,"host":null,'
       b'"timestamp":"1466462213257","port":-1,"version":4}',
}


def test_reads_every_broker_version(zk):
    for broker_id, data in BROKERS.items():
        zk.create(paths.broker_path(broker_id), data, makepath=True)
    brokers = {b.id: b for b in cluster.read_brokers(zk)}
    assert {i: b.address for i, b in brokers.items()} == {
        1: "h1:9092", 2: "h2:9092", 3: "h3:9094", 4: "::1:9095",
    }
    assert brokers[2].endpoints == (BrokerEndpoint("SSL", "h2", 9093, "SSL"), BrokerEndpoint("PLAINTEXT", "h2", 9092))
    assert brokers[2].jmx_port == 9999
    assert brokers[3].rack == "r1" and brokers[3].timestamp == "1466462213256"
    assert brokers[4].endpoints[1] == BrokerEndpoint("INTERNAL", "::1", 9095, "PLAINTEXT")
    assert brokers[1].version == 1 and brokers[4].version == 4


def test_read_brokers_sorts_ids_as_strings_and_tolerates_a_missing_parent(zk):
    assert cluster.read_brokers(zk) == []
    for broker_id in (10, 2, 1):
        info = BrokerInfo(broker_id, f"h{broker_id}", 9092, timestamp="1")
        zk.create(paths.broker_path(broker_id), cluster.encode_broker(info), makepath=True)
    assert [b.id for b in cluster.read_brokers(zk)] == [1, 10, 2]


def test_encoded_registration_is_byte_compatible_with_kafka_0_10(zk):
    info = BrokerInfo(7, "kafka1", 9092, timestamp="1476297036133")
    assert cluster.encode_broker(info) == (
        b'{"jmx_port":-1,"timestamp":"1476297036133","endpoints":["PLAINTEXT://kafka1:9092"],'
        b'"host":"kafka1","version":3,"port":9092}'
    )
    zk.create(paths.broker_path(7), cluster.encode_broker(info), makepath=True)
    read = cluster.read_broker(zk, 7)
    assert (read.host, read.port, read.timestamp) == ("kafka1", 9092, "1476297036133")


def test_reads_topic_and_partition_state(zk):
    zk.create(paths.topic_path("t"), b'{"version":1,"partitions":{"1":[2,3],"0":[1,2],"10":[3]}}', makepath=True)
    zk.create(
        paths.partition_state_path("t", 0),
        b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":7,"isr":[1,2]}',
        makepath=True,
    )
    topic = cluster.read_topic(zk, "t")
    assert topic == TopicAssignment("t", {0: (1, 2), 1: (2, 3), 10: (3,)})
    assert topic.partitions == [0, 1, 10]
    assert cluster.read_partition_state(zk, "t", 0) == PartitionState(1, 7, 3, (1, 2))
    assert cluster.read_topic_names(zk) == ["t"]


def test_encoders_round_trip_in_kafka_key_order():
    state = PartitionState(111, 0, 1, (111,))
    assert cluster.encode_partition_state(state) == (
        b'{"controller_epoch":1,"leader":111,"version":1,"leader_epoch":0,"isr":[111]}'
    )
    assert cluster.parse_partition_state("t", 0, cluster.encode_partition_state(state)) == state
    topic = TopicAssignment("t", {1: (2,), 0: (1,)})
    assert cluster.encode_topic(topic) == b'{"version":1,"partitions":{"0":[1],"1":[2]}}'


def test_reads_the_spaced_json_of_kafka_0_8_0(zk):
    zk.create(paths.broker_path(5), b'{ "host":"old", "jmx_port":-1, "port":9092, "version":1 }', makepath=True)
    assert cluster.read_broker(zk, 5).address == "old:9092"


MALFORMED_BROKERS = [
    (b"", "is empty"),
    (b"not json", "is not valid JSON"),
    (b"[1,2]", "holds JSON list"),
    (b'{"host":"h","port":1}', "has no field 'version'"),
    (b'{"version":1,"port":9092}', "has no field 'host'"),
    (b'{"version":1,"host":"h","port":"9092"}', "field 'port' is '9092', expected a number"),
    (b'{"version":2,"host":"h","port":1}', "has no field 'endpoints'"),
    (b'{"version":3,"endpoints":["h:9092"]}', "endpoint 'h:9092' is not LISTENER://host:port"),
    (b'{"version":3,"endpoints":["SSL://h:9093"]}', "has no PLAINTEXT endpoint"),
    (b'{"version":true,"host":"h","port":1}', "field 'version' is True"),
]


@pytest.mark.parametrize(("data", "problem"), MALFORMED_BROKERS)
def test_malformed_broker_names_the_znode(zk, data, problem):
    zk.create(paths.broker_path(3), data, makepath=True)
    with pytest.raises(ZnodeFormatError) as err:
        cluster.read_broker(zk, 3)
    assert err.value.path == "/brokers/ids/3"
    assert problem in str(err.value)
    assert str(err.value).startswith("znode /brokers/ids/3: ")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"version":1}', "has no field 'partitions'"),
        (b'{"version":1,"partitions":[0,1]}', "field 'partitions' is [0, 1], expected an object"),
        (b'{"version":1,"partitions":{"a":[1]}}', "partition id 'a' is not a non-negative number"),
        (b'{"version":1,"partitions":{"0":1}}', "replicas of partition 0 are 1"),
        (b"\xff\xfe", "is not valid JSON"),
    ],
)
def test_malformed_topic_names_the_znode(zk, data, problem):
    zk.create(paths.topic_path("bad"), data, makepath=True)
    with pytest.raises(ZnodeFormatError, match="znode /brokers/topics/bad: ") as err:
        cluster.read_topic(zk, "bad")
    assert problem in str(err.value)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"leader":1,"leader_epoch":0,"controller_epoch":1}', "has no field 'isr'"),
        (b'{"leader":"1","leader_epoch":0,"controller_epoch":1,"isr":[1]}', "field 'leader' is '1'"),
        (b'{"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":["a"]}', "field 'isr' is ['a']"),
        (b'{"leader":1,"controller_epoch":1,"isr":[1]}', "has no field 'leader_epoch'"),
    ],
)
def test_malformed_partition_state_names_the_znode(zk, data, problem):
    zk.create(paths.partition_state_path("t", 2), data, makepath=True)
    with pytest.raises(ZnodeFormatError, match="znode /brokers/topics/t/partitions/2/state: ") as err:
        cluster.read_partition_state(zk, "t", 2)
    assert problem in str(err.value)


def test_missing_znodes_raise_a_typed_error(zk):
    with pytest.raises(ZnodeMissingError, match="znode /brokers/ids/9 does not exist"):
        cluster.read_broker(zk, 9)
    with pytest.raises(ZnodeMissingError, match="/brokers/topics/none"):
        cluster.read_topic(zk, "none")
    with pytest.raises(ZnodeMissingError, match="/brokers/topics/none/partitions/0/state"):
        cluster.read_partition_state(zk, "none", 0)

"""The front's own group coordinators against real clients and the real broker: confluent-kafka's classic protocol
(eager range, roundrobin, cooperative-sticky) and its KIP-848 protocol (uniform and range) consume, commit and resume
(kafka-python's group consumer: ``test_front_relay``); a stable group takes in a new member within about a
heartbeat; an empty group's simultaneous first members get one generation; a client gone in the middle of a join
does not wedge the group; offsets outlive the front."""

from __future__ import annotations

import datetime
import json
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from kio.schema.consumer_group_describe.v1.request import ConsumerGroupDescribeRequest
from kio.schema.errors import ErrorCode
from kio.schema.join_group.v5.request import JoinGroupRequest, JoinGroupRequestProtocol
from kio.static.primitive import i32Timedelta
from support import produce, wait_for, zkconsumer_cli
from time_scale import bounded, scaled

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import exchange, exchange_on
from zkconsumer.front.proxy.wire import encode_request
from zkconsumer.kafka.topics import create_topic

#: a short minimum session timeout lets the fault tests expire a member in seconds
OPTIONS = ("--group-min-session-timeout-ms", "1000")


@pytest.fixture(scope="module")
def front(broker_bootstrap, tmp_path_factory) -> Iterator[FrontProcess]:
    with FrontProcess(broker_bootstrap, tmp_path_factory.mktemp("front"), options=OPTIONS) as process:
        yield process
    assert named(process, "front.connection_failed") == []


def events(front: FrontProcess) -> list[dict]:
    lines = front.log_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def named(front: FrontProcess, name: str, group: str | None = None) -> list[dict]:
    return [e for e in events(front) if e["event"] == name and (group is None or e.get("group") == group)]


def consume(consumer: Consumer, count: int, timeout: float = 30.0) -> list[bytes]:
    """Up to ``count`` values; stops early only at ``timeout`` (the reference machine's figure, bounded)."""
    values: list[bytes] = []
    deadline = time.monotonic() + bounded(timeout)
    while len(values) < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value())
        elif message is not None and message.error().code() != KafkaError._PARTITION_EOF:
            raise AssertionError(message.error())
    return values


CONFLUENT_PROTOCOLS = {
    "range": {"partition.assignment.strategy": "range"},
    "roundrobin": {"partition.assignment.strategy": "roundrobin"},
    "cooperative-sticky": {"partition.assignment.strategy": "cooperative-sticky"},
    "consumer-uniform": {"group.protocol": "consumer", "group.remote.assignor": "uniform"},
    "consumer-range": {"group.protocol": "consumer", "group.remote.assignor": "range"},
}


@pytest.mark.timeout(150)  # its waits: 30 + 10 + 30 s, and four productions of up to 10 s
@pytest.mark.parametrize("protocol", sorted(CONFLUENT_PROTOCOLS))
def test_confluent_consumers_consume_commit_and_resume_through_the_front_s_coordinator(front, topic_name, protocol):
    create_topic(front.address, topic_name, 3)
    for partition in range(3):  # four to each, so every partition has a committed offset to resume from
        produce(front.address, topic_name, [f"first-{i}".encode() for i in range(partition, 12, 3)],
                partition=partition)
    group = f"g-{uuid.uuid4().hex[:6]}"
    config = {"bootstrap.servers": front.address, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False, **CONFLUENT_PROTOCOLS[protocol]}

    first = Consumer(config)
    first.subscribe([topic_name])
    assert sorted(consume(first, 12)) == sorted(f"first-{i}".encode() for i in range(12))
    first.commit(asynchronous=False)
    first.close()

    produce(front.address, topic_name, [f"second-{i}".encode() for i in range(5)])
    second = Consumer(config)
    second.subscribe([topic_name])
    assert sorted(consume(second, 5)) == sorted(f"second-{i}".encode() for i in range(5))
    committed = second.committed([TopicPartition(topic_name, p) for p in range(3)], timeout=bounded(10))
    assert sum(tp.offset for tp in committed) == 12  # where the first left off
    second.close()

    # The front's coordinator ran the group, under the protocol asked for.
    prefix = "front.consumer_group." if protocol.startswith("consumer") else "front.group."
    joined = named(front, prefix + "member_joined", group)
    assert len(joined) == 2
    if protocol.startswith("consumer"):
        computed = named(front, "front.consumer_group.target_assignment_computed", group)
        assert {e["assignor"] for e in computed} == {protocol.removeprefix("consumer-")}
    else:
        assert {e["protocol"] for e in named(front, "front.group.round_completed", group)} == {protocol}


class Member(threading.Thread):
    """A confluent-kafka classic consumer polling in its own thread, as an application would."""

    def __init__(self, address: str, group: str, topic: str, **settings: object) -> None:
        super().__init__(daemon=True)
        self.consumer = Consumer({"bootstrap.servers": address, "group.id": group, "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False, **settings})
        self.topic = topic
        self.assigned = threading.Event()
        #: the partitions of the last assignment (an eager member's whole assignment)
        self.partitions: set[int] = set()
        self.stop = threading.Event()
        self.to_commit: list[list[TopicPartition]] = []
        self.committed = threading.Event()

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.partitions = {tp.partition for tp in partitions}
        self.assigned.set()

    def run(self) -> None:
        self.consumer.subscribe([self.topic], on_assign=self._on_assign)
        while not self.stop.is_set():
            self.consumer.poll(0.1)
            if self.to_commit:
                self.consumer.commit(offsets=self.to_commit.pop(), asynchronous=False)
                self.committed.set()
        self.consumer.close()

    def commit(self, offsets: list[TopicPartition]) -> None:
        """Commit ``offsets`` from the polling thread, and wait until it did."""
        self.committed.clear()
        self.to_commit.append(offsets)
        wait_for(self.committed.is_set)

    def close(self) -> None:
        self.stop.set()
        self.join(bounded(30))


def test_a_stable_group_of_three_takes_in_a_fourth_member_within_about_a_heartbeat(front, topic_name):
    create_topic(front.address, topic_name, 8)
    group = f"g4-{uuid.uuid4().hex[:6]}"
    settings = {"session.timeout.ms": 45000, "heartbeat.interval.ms": 3000}
    members = [Member(front.address, group, topic_name, **settings) for _ in range(3)]
    try:
        for member in members:
            member.start()
        wait_for(lambda: all(m.assigned.is_set() for m in members), timeout=30)
        wait_for(lambda: any(len(e["members"]) == 3 for e in named(front, "front.group.round_completed", group)))
        fourth = Member(front.address, group, topic_name, **settings)
        members.append(fourth)
        fourth.start()
        wait_for(lambda: fourth.assigned.is_set(), timeout=30)
        completed = wait_for(lambda: [e for e in named(front, "front.group.round_completed", group)
                                      if len(e["members"]) == 4])
        started = [e for e in named(front, "front.group.round_started", group)
                   if e["at_ms"] <= completed[0]["at_ms"]][-1]  # type: ignore[index]
        took_ms = completed[0]["at_ms"] - started["at_ms"]  # type: ignore[index]
        # Kafka completes the round once every known member rejoined: at their next heartbeat (3 s), not at half
        # the session timeout as the broker behind does.
        assert took_ms < 45000 / 2
        assert took_ms <= 3000 + scaled(3) * 1000  # the members' next heartbeat, and their rejoin (with a margin)
    finally:
        for member in members:
            member.close()


def test_two_members_subscribing_to_an_empty_group_at_once_get_one_generation_after_the_initial_delay(front,
                                                                                                     topic_name):
    create_topic(front.address, topic_name, 4)
    group = f"g2-{uuid.uuid4().hex[:6]}"
    members = [Member(front.address, group, topic_name, **{"session.timeout.ms": 10000}) for _ in range(2)]
    try:
        for member in members:
            member.start()
        wait_for(lambda: all(m.assigned.is_set() for m in members), timeout=30)
        completed = named(front, "front.group.round_completed", group)
        assert [(e["generation"], len(e["members"])) for e in completed] == [(1, 2)]
        started = named(front, "front.group.round_started", group)
        assert started[0]["initial_delay_ms"] == 3000
        assert completed[0]["at_ms"] - started[0]["at_ms"] >= 3000
    finally:
        for member in members:
            member.close()


@pytest.mark.timeout(150)  # its waits: 30 + 10 + 3 x 30 s
def test_a_client_gone_in_the_middle_of_a_join_is_removed_and_the_group_goes_on(front, topic_name):
    create_topic(front.address, topic_name, 2)
    group = f"gj-{uuid.uuid4().hex[:6]}"
    member = Member(front.address, group, topic_name, **{"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    try:
        member.start()
        wait_for(lambda: member.partitions == {0, 1}, timeout=30)

        # A second client asks for a member id, joins with it, and goes away without waiting for the round. Its
        # subscription is the consumer protocol's version 0, which the leader reads.
        subscription = struct.pack(">hih", 0, 1, len(topic_name)) + topic_name.encode() + struct.pack(">i", -1)

        two_seconds = i32Timedelta.parse(datetime.timedelta(seconds=2))

        def join(member_id: str) -> JoinGroupRequest:
            return JoinGroupRequest(group_id=group, session_timeout=two_seconds, rebalance_timeout=two_seconds,
                                    member_id=member_id,
                                    group_instance_id=None, protocol_type="consumer",
                                    protocols=(JoinGroupRequestProtocol(name="range", metadata=subscription),))

        host, port = front.address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=bounded(10)) as sock:
            required = exchange_on(sock, join(""))
            assert required.error_code == 79  # MEMBER_ID_REQUIRED
            sock.sendall(encode_request(join(required.member_id), 7, "gone"))
        gone = required.member_id

        # The round completes with it (it did join), it never syncs, and it is removed at its rebalance timeout;
        # the remaining member is given every partition again.
        wait_for(lambda: any(e["member_id"] == gone for e in named(front, "front.group.member_expired", group)),
                 timeout=30)
        wait_for(lambda: any(e["members"] == [e["leader"]] and e["generation"] >= 3
                             for e in named(front, "front.group.round_completed", group)), timeout=30)
        wait_for(lambda: member.partitions == {0, 1}, timeout=30)
    finally:
        member.close()


@pytest.mark.timeout(150)  # its waits: 2 x (30 + 10) s, three productions of up to 10 s, two fronts started
def test_committed_offsets_outlive_a_restart_of_the_front(broker_bootstrap, tmp_path, topic_name):
    group = f"gr-{uuid.uuid4().hex[:6]}"
    with FrontProcess(broker_bootstrap, tmp_path / "one") as first_front:
        create_topic(first_front.address, topic_name, 2)
        for partition in (0, 1):  # three to each: both partitions get a committed offset (3 + 3)
            produce(first_front.address, topic_name, [f"m-{partition}-{i}".encode() for i in range(3)],
                    partition=partition)
        consumer = Consumer({"bootstrap.servers": first_front.address, "group.id": group,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False,
                             "group.protocol": "consumer"})
        consumer.subscribe([topic_name])
        assert len(consume(consumer, 6)) == 6
        consumer.commit(asynchronous=False)
        consumer.close()
    with FrontProcess(broker_bootstrap, tmp_path / "two") as second_front:
        produce(second_front.address, topic_name, [b"later"])
        resumed = Consumer({"bootstrap.servers": second_front.address, "group.id": group,
                            "auto.offset.reset": "earliest", "enable.auto.commit": False})
        resumed.subscribe([topic_name])
        assert consume(resumed, 1) == [b"later"]
        committed = resumed.committed([TopicPartition(topic_name, p) for p in range(2)], timeout=bounded(10))
        assert sum(tp.offset for tp in committed) == 6
        resumed.close()


@pytest.mark.timeout(300)  # its waits: 30 + 2 x 15 s, and three commands of up to 60 s
def test_groups_list_coordinator_and_describe_read_both_protocols_groups_through_the_front(front, topic_name, zk,
                                                                                 zk_chroot):
    create_topic(front.address, topic_name, 2)
    produce(front.address, topic_name, [b"one", b"two"])
    classic_group, consumer_group = f"lc-{uuid.uuid4().hex[:6]}", f"lk-{uuid.uuid4().hex[:6]}"
    for group in (classic_group, consumer_group):  # groups a migration knows in ZooKeeper
        zk.ensure_path(f"/consumers/{group}/ids")
    classic = Member(front.address, classic_group, topic_name, **{"session.timeout.ms": 10000})
    modern = Member(front.address, consumer_group, topic_name, **{"group.protocol": "consumer"})
    try:
        classic.start()
        modern.start()
        wait_for(lambda: classic.partitions == {0, 1} and modern.partitions == {0, 1}, timeout=30)
        for member in (classic, modern):
            member.commit([TopicPartition(topic_name, 0, 1), TopicPartition(topic_name, 1, 1)])

        listed = zkconsumer_cli("groups", "list", "--zookeeper", zk_chroot, "--bootstrap-server", front.address,
                                "--json")
        assert listed.returncode == 0, listed.stderr
        rows = {row["group"]: row for row in json.loads(listed.stdout)}
        assert {group: (row["offsets"], row["lives_in"], row["type"], row["state"])
                for group, row in rows.items() if group in (classic_group, consumer_group)} == {
            classic_group: ("kafka", ["zookeeper", "broker"], "classic", "Stable"),
            consumer_group: ("kafka", ["zookeeper", "broker"], "consumer", "Stable")}

        shown = zkconsumer_cli("coordinator", "--bootstrap-server", front.address, "--group", classic_group,
                               "--json")
        assert shown.returncode == 0, shown.stderr
        described = json.loads(shown.stdout)
        assert (described["state"], described["protocol"]) == ("Stable", "range")
        assert [m["client_id"] for m in described["members"]] == ["rdkafka"]

        shown = zkconsumer_cli("coordinator", "--bootstrap-server", front.address, "--group", consumer_group,
                               "--json")
        assert shown.returncode == 0, shown.stderr
        described = json.loads(shown.stdout)
        assert (described["state"], described["protocol_type"], described["protocol"]) == (
            "Stable", "consumer", "uniform")
        assert [sorted(p["partition"] for p in m["assignment"]) for m in described["members"]] == [[0, 1]]
        assert [m["subscription"] for m in described["members"]] == [[topic_name]]

        # A KIP-848 group as Kafka describes it: ConsumerGroupDescribe, with its epochs and the member's assignment.
        answer = exchange(front.address, ConsumerGroupDescribeRequest(group_ids=(consumer_group, classic_group),
                                                                      include_authorized_operations=False))
        modern_group, classic_answer = answer.groups
        assert (modern_group.error_code, modern_group.group_state, modern_group.assignor_name) == (
            ErrorCode.none, "Stable", "uniform")
        assert [sorted(p for t in m.assignment.topic_partitions for p in t.partitions)
                for m in modern_group.members] == [[0, 1]]
        assert classic_answer.error_code == ErrorCode.group_id_not_found  # a classic group is not a consumer group
    finally:
        classic.close()
        modern.close()

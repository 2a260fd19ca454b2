"""The connector end to end against the real ZooKeeper and broker: Kafka's ZookeeperConsumerConnectorTest
ported, plus the cases a member most easily gets wrong (claim conflicts, no brokers, session expiry, malformed
members). Each test has its own chroot, where the bridge mirrors the broker as a ZooKeeper-mode cluster would
register itself."""

from __future__ import annotations

import pytest
from consumer.test_partition_ownership import InvariantsAtSteps
from kazoo.client import KazooClient
from structlog.testing import capture_logs
from support import CONNECTOR_GROUP as GROUP
from support import connector_config as config
from support import mirrored_topic, produce, take, wait_for

from zkconsumer import (
    ConsumerRebalanceFailedException,
    ConsumerRebalanceListener,
    ConsumerThreadId,
    ConsumerTimeoutException,
    InvalidConfigError,
    MessageStreamsExistException,
    Whitelist,
    create_connector,
)
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.kafka.topics import create_topic
from zkconsumer.members.faults import close_session
from zkconsumer.zk.client import close_client, open_client
from zkconsumer.zk.reads import children, value_or_none


def owners(zk: KazooClient, topic: str, group: str = GROUP) -> list[tuple[str, str]]:
    """The owner znodes as the Kafka tools list them: children sorted, data as a string. An owner of an expiring
    session can vanish between the listing and its read: it is then no longer there."""
    base = f"/consumers/{group}/owners/{topic}"
    read = {p: value_or_none(zk.get_async(f"{base}/{p}")) for p in children(zk, base)}
    return [(p, got[0].decode()) for p, got in read.items() if got is not None]


def offsets(zk: KazooClient, topic: str, group: str = GROUP) -> dict[int, int]:
    base = f"/consumers/{group}/offsets/{topic}"
    if not zk.exists(base):
        return {}
    return {int(p): int(zk.get(f"{base}/{p}")[0]) for p in zk.get_children(base)}


def values(messages) -> list[bytes]:
    return sorted(m.message for m in messages)


@pytest.mark.timeout(180)  # its waits, summed: 15 s for the topic, 3 x 15 s for the group, 5 x 20 s to take
def test_consumers_joining_one_by_one_share_the_partitions_and_commit_what_they_took(zk, kafka_zk, bootstrap_servers,
                                                                                     topic_name):
    """Kafka's testBasic, one scenario whose phases each start from what the previous one left: (1) with no data the
    iterator times out, and can be iterated again; (2) a lone consumer gets everything, owns both partitions and
    commits; (3) a second one joins: each owns one partition and gets exactly its new messages; (4) a consumer with
    an empty subscription joins and changes nothing; (5) streams are created once per connector, and the shutdowns
    commit everything and leave no member registered."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)

    # 1. No data: the iterator times out, and can be iterated again after it did.
    with create_connector(config(kafka_zk, "consumer0")) as consumer0:
        stream = consumer0.create_message_streams({topic: 1})[topic][0]
        for _ in range(2):
            with pytest.raises(ConsumerTimeoutException):
                next(iter(stream))

    # 2. One consumer gets everything and owns both partitions with its thread 0.
    sent = [f"a{p}-{i}".encode() for p in range(2) for i in range(2)]
    for p in range(2):
        produce(bootstrap_servers, topic, [v for v in sent if v.startswith(f"a{p}".encode())], partition=p)
    invariants = InvariantsAtSteps()  # of consumer1's ownership, before each step of its rebalances
    consumer1 = invariants.connector = ZookeeperConsumerConnector(config(kafka_zk, "consumer1"), step_gate=invariants)
    stream1 = consumer1.create_message_streams({topic: 1})[topic][0]
    assert values(take(stream1, 4)) == sorted(sent)
    assert owners(zk, topic) == [("0", "group1_consumer1-0"), ("1", "group1_consumer1-0")]
    consumer1.commit_offsets()
    assert offsets(zk, topic) == {0: 2, 1: 2}

    # 3. A second consumer joins: each owns one partition and gets exactly the new messages of it.
    consumer2 = create_connector(config(kafka_zk, "consumer2"))
    stream2 = consumer2.create_message_streams({topic: 1})[topic][0]
    wait_for(lambda: owners(zk, topic) == [("0", "group1_consumer1-0"), ("1", "group1_consumer2-0")])
    more = [f"b{p}-{i}".encode() for p in range(2) for i in range(2)]
    for p in range(2):
        produce(bootstrap_servers, topic, [v for v in more if v.startswith(f"b{p}".encode())], partition=p)
    got1, got2 = take(stream1, 2), take(stream2, 2)
    assert {m.partition for m in got1} == {0} and {m.partition for m in got2} == {1}
    assert values(got1 + got2) == sorted(more)

    # 4. A consumer with an empty subscription joins the group and changes nothing.
    consumer3 = create_connector(config(kafka_zk, "consumer3"))
    assert consumer3.create_message_streams({}) == {}
    wait_for(lambda: zk.exists(f"/consumers/{GROUP}/ids/group1_consumer3"))
    wait_for(lambda: consumer1.metrics.rebalances >= 3 and consumer2.metrics.rebalances >= 2)
    # consumer2 may have counted its second rebalance before consumer3 came (a conflict at its join makes one more):
    # the one consumer3 starts may still be between its release and its claim; once done, nothing changed hands
    wait_for(lambda: owners(zk, topic) == [("0", "group1_consumer1-0"), ("1", "group1_consumer2-0")])
    # consumer1 released what it fetched twice: nothing it released was fetched still (checked at the next step)
    assert invariants.checked.count("assign") >= 3 and invariants.violations == []
    produce(bootstrap_servers, topic, [b"c0"], partition=0)
    produce(bootstrap_servers, topic, [b"c1"], partition=1)
    assert values(take(stream1, 1) + take(stream2, 1)) == [b"c0", b"c1"]

    # 5. Streams are created once per connector.
    with pytest.raises(MessageStreamsExistException):
        consumer1.create_message_streams({topic: 1})
    for c in (consumer3, consumer2, consumer1):
        c.shutdown()
    assert offsets(zk, topic) == {0: 5, 1: 5}
    assert zk.get_children(f"/consumers/{GROUP}/ids") == []


def test_registration_and_layout_read_as_the_kafka_tools_read_them(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 3)
    with create_connector(config(kafka_zk, "c1")) as consumer:
        consumer.create_message_streams({topic: 2})
        data, stat = zk.get(f"/consumers/{GROUP}/ids/group1_c1")
        assert stat.ephemeralOwner != 0
        prefix = f'{{"version":1,"subscription":{{"{topic}":2}},"pattern":"static","timestamp":"'.encode()
        assert data.startswith(prefix) and data.endswith(b'"}')
        # range over threads c1-0, c1-1: 0,1 -> thread 0; 2 -> thread 1
        assert owners(zk, topic) == [("0", "group1_c1-0"), ("1", "group1_c1-0"), ("2", "group1_c1-1")]
        # offsets exist as soon as the partitions are owned (Burrow and KafkaOffsetMonitor need them)
        wait_for(lambda: offsets(zk, topic) == {0: 0, 1: 0, 2: 0})
        assert sorted(consumer.topic_registry[topic]) == [0, 1, 2]


class RecordingListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.released: list[dict[str, set[int]]] = []
        self.started: list[tuple[str, dict]] = []

    def before_releasing_partitions(self, partition_ownership):
        self.released.append(partition_ownership)

    def before_starting_fetchers(self, consumer_id, global_partition_assignment):
        self.started.append((consumer_id, global_partition_assignment))


class FailingOnceListener(ConsumerRebalanceListener):
    """Raises from one hook the first time it is called, as an application's bug or a failed commit would."""

    def __init__(self, hook: str) -> None:
        self.hook = hook
        self.calls = 0

    def _maybe_fail(self, hook: str) -> None:
        if hook == self.hook:
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError(f"{hook} failed on purpose")

    def before_releasing_partitions(self, partition_ownership):
        self._maybe_fail("before_releasing_partitions")

    def before_starting_fetchers(self, consumer_id, global_partition_assignment):
        self._maybe_fail("before_starting_fetchers")


@pytest.mark.parametrize(("hook", "step", "number", "skipped"), [
    ("before_releasing_partitions", "rebalance.listener_before_release", 3, "rebalance.release"),
    ("before_starting_fetchers", "rebalance.listener_before_start", 9, "rebalance.start_fetchers"),
])
def test_a_step_that_raises_emits_its_event_with_the_error_and_fails_the_attempt_with_it(
        zk, kafka_zk, bootstrap_servers, topic_name, hook, step, number, skipped):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    listener = FailingOnceListener(hook)
    error = f"RuntimeError: {hook} failed on purpose"
    with create_connector(config(kafka_zk, "c"), listener=listener) as consumer, capture_logs() as events:
        stream = consumer.create_message_streams({topic: 1})[topic][0]
        assert listener.calls == 2
        failed_step = [e for e in events if e["event"] == step and e["attempt"] == 1]
        assert len(failed_step) == 1
        assert failed_step[0]["log_level"] == "warning"
        assert failed_step[0]["error"] == error
        assert failed_step[0]["step"] == number and failed_step[0]["duration_ms"] >= 0
        # The attempt ended there: no later step of attempt 1, and its failure names the error, not a conflict.
        assert [e for e in events if e["event"] == skipped and e["attempt"] == 1] == []
        failed = [e for e in events if e["event"] == "rebalance.attempt_failed"]
        assert [(e["attempt"], e["reason"]) for e in failed] == [(1, error)]
        # Attempt 2 ran the same step cleanly and completed.
        again = [e for e in events if e["event"] == step and e["attempt"] == 2]
        assert [(e["log_level"], "error" in e) for e in again] == [("info", False)]
        assert [e["attempts"] for e in events if e["event"] == "rebalance.completed"] == [2]
        assert owners(zk, topic) == [("0", "group1_c-0"), ("1", "group1_c-0")]
        produce(bootstrap_servers, topic, [b"after the retry"], partition=1)
        assert [m.message for m in take(stream, 1)] == [b"after the retry"]


def test_rebalance_listener_payloads(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    one, two = RecordingListener(), RecordingListener()
    consumer1 = create_connector(config(kafka_zk, "consumer1"), listener=one)
    consumer1.create_message_streams({topic: 1})
    assert one.released == [{}]
    assert one.started == [("group1_consumer1", {topic: {0: ConsumerThreadId("group1_consumer1-0"),
                                                         1: ConsumerThreadId("group1_consumer1-0")}})]
    consumer2 = create_connector(config(kafka_zk, "consumer2"))
    consumer2.set_consumer_rebalance_listener(two)
    consumer2.create_message_streams({topic: 1})
    wait_for(lambda: len(one.started) >= 2 and two.started)
    assert one.released[-1] == {topic: {0, 1}}
    expected = {topic: {0: ConsumerThreadId("group1_consumer1-0"), 1: ConsumerThreadId("group1_consumer2-0")}}
    assert one.started[-1][1] == expected == two.started[-1][1]
    assert one.started[-1][1][topic][1].consumer == "group1_consumer2"
    with pytest.raises(MessageStreamsExistException):
        consumer2.set_consumer_rebalance_listener(one)
    consumer2.shutdown()
    consumer1.shutdown()


def test_wildcard_streams_follow_matching_topics(zk, kafka_zk, bootstrap_servers, topic_name):
    first = mirrored_topic(zk, bootstrap_servers, f"{topic_name}-x1", 1)
    mirrored_topic(zk, bootstrap_servers, f"other-{topic_name}", 1)
    with create_connector(config(kafka_zk, "w")) as consumer:
        streams = consumer.create_message_streams_by_filter(Whitelist(f"{topic_name}-x.*"), 2)
        assert len(streams) == 2
        registration = zk.get(f"/consumers/{GROUP}/ids/group1_w")[0]
        assert b'"pattern":"white_list"' in registration
        produce(bootstrap_servers, first, [b"one"])
        produce(bootstrap_servers, f"other-{topic_name}", [b"not for us"])
        assert [m.message for m in take(streams[0], 1)] == [b"one"]
        # A topic created later that matches is picked up without any other trigger.
        second = mirrored_topic(zk, bootstrap_servers, f"{topic_name}-x2", 1)
        wait_for(lambda: owners(zk, second) == [("0", "group1_w-0")])
        produce(bootstrap_servers, second, [b"two"])
        assert [m.message for m in take(streams[0], 1)] == [b"two"]
        with pytest.raises(MessageStreamsExistException):
            consumer.create_message_streams_by_filter(Whitelist(".*"))
        assert take(streams[1], 1, timeout=1) == []


@pytest.mark.parametrize("reset", ["smallest", "largest"])
def test_auto_offset_reset_without_a_committed_offset(zk, kafka_zk, bootstrap_servers, topic_name, reset):
    """AutoOffsetResetTest with the offset missing (-1). The broker here never answers OFFSET_OUT_OF_RANGE for an
    offset beyond the log end (it returns nothing), so the forced-10000 half of that test cannot run against it."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [str(i).encode() for i in range(10)], batch_each=True)
    with create_connector(config(kafka_zk, "r", **{"auto.offset.reset": reset})) as consumer:
        stream = consumer.create_message_streams({topic: 1})[topic][0]
        expected = 10 if reset == "smallest" else 0
        wait_for(lambda: offsets(zk, topic) == {0: 0 if reset == "smallest" else 10})
        assert len(take(stream, 10, timeout=3 if expected == 0 else 20)) == expected
        produce(bootstrap_servers, topic, [b"new"])
        assert [m.message for m in take(stream, 1)] == [b"new"]
        consumer.commit_offsets()
        assert offsets(zk, topic) == {0: 11}


def test_claim_conflict_fails_after_the_retries_and_leaves_nothing(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    squatter = open_client(kafka_zk)
    consumer = create_connector(config(kafka_zk, "c", **{"rebalance.max.retries": 2, "rebalance.backoff.ms": 50}))
    try:
        squatter.create(f"/consumers/{GROUP}/owners/{topic}/1", b"group1_ghost-0", ephemeral=True, makepath=True)
        with capture_logs() as events, pytest.raises(ConsumerRebalanceFailedException, match="after 2 retries"):
            consumer.create_message_streams({topic: 1})
        claims = [e for e in events if e["event"] == "rebalance.claim"]
        assert len(claims) == 2
        assert claims[0]["conflicts"] == [{"topic": topic, "partition": 1, "holder": "group1_ghost-0"}]
        # A conflict is an outcome of the step, not an error in it.
        assert [(c["log_level"], "error" in c) for c in claims] == [("info", False)] * 2
        assert owners(zk, topic) == [("1", "group1_ghost-0")]  # partition 0 was never half-claimed
        failed = [e for e in events if e["event"] == "rebalance.attempt_failed"]
        assert [(e["attempt"], e["reason"]) for e in failed] == [(1, "ownership conflict"), (2, "ownership conflict")]
        assert consumer.metrics.failed_rebalances == 1
    finally:
        consumer.shutdown()
        close_client(squatter)
    assert zk.get_children(f"/consumers/{GROUP}/ids") == []


def test_a_background_rebalance_keeps_retrying_after_its_retries_run_out(zk, kafka_zk, bootstrap_servers, topic_name):
    """KAFKA-4228: Kafka's watcher thread swallowed ConsumerRebalanceFailedException and the member owned nothing
    until some unrelated change. Here it keeps retrying, and says so."""
    first = mirrored_topic(zk, bootstrap_servers, f"{topic_name}-1", 1)
    later = f"{topic_name}-2"
    squatter = open_client(kafka_zk)
    consumer = create_connector(config(kafka_zk, "c", **{"rebalance.max.retries": 2, "rebalance.backoff.ms": 50}))
    try:
        consumer.create_message_streams({first: 1, later: 1})  # the second topic does not exist yet
        assert owners(zk, first) == [("0", "group1_c-0")]
        squatter.create(f"/consumers/{GROUP}/owners/{later}/0", b"group1_ghost-0", ephemeral=True, makepath=True)
        with capture_logs() as events:
            mirrored_topic(zk, bootstrap_servers, later, 1)  # its creation triggers a rebalance, which conflicts
            wait_for(lambda: "rebalance.retrying_after_failure" in [e["event"] for e in events])
            assert consumer.metrics.consecutive_failures >= 1
            close_client(squatter)
            wait_for(lambda: owners(zk, later) == [("0", "group1_c-0")])
            assert owners(zk, first) == [("0", "group1_c-0")]
            wait_for(lambda: consumer.metrics.consecutive_failures == 0)
    finally:
        consumer.shutdown()
        close_client(squatter)


def test_no_brokers_succeeds_owning_nothing_then_rebalances_when_one_arrives(zk, zk_chroot, bootstrap_servers,
                                                                             topic_name):
    from zkconsumer.bridge.metadata_bridge import MetadataBridge

    zk.create(f"/brokers/topics/{topic_name}", b'{"version":1,"partitions":{"0":[111]}}', makepath=True)
    create_topic(bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic_name, [b"waiting"])
    with create_connector(config(zk_chroot, "c")) as consumer, capture_logs() as events:
        stream = consumer.create_message_streams({topic_name: 1})[topic_name][0]
        assert "rebalance.no_brokers" in [e["event"] for e in events]
        assert consumer.topic_registry == {}
        with MetadataBridge(zk_chroot, bootstrap_servers) as bridge:
            bridge.sync_once()
            assert [m.message for m in take(stream, 1)] == [b"waiting"]
            assert owners(zk, topic_name) == [("0", "group1_c-0")]


@pytest.mark.timeout(150)  # its waits, summed: 15 s for the topic, 30 + 15 + 30 s for the expiry, 2 x 20 s to take
def test_session_expiry_re_registers_and_rebalances(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    invariants = InvariantsAtSteps()
    with ZookeeperConsumerConnector(config(kafka_zk, "c"), step_gate=invariants) as consumer, \
            capture_logs() as events:
        invariants.connector = consumer
        stream = consumer.create_message_streams({topic: 1})[topic][0]
        produce(bootstrap_servers, topic, [b"before"], partition=0)
        assert [m.message for m in take(stream, 1)] == [b"before"]
        # Progress since the last commit is lost with the session (as in Kafka): commit so none is expected.
        consumer.commit_offsets()
        old_session = zk.get(f"/consumers/{GROUP}/ids/group1_c")[1].ephemeralOwner
        # Expire the session the way ZooKeeper does: another client attaches to it and closes it (again, should the
        # two clients of the session have taken the connection from each other until that one gave up).
        session = consumer.zk.client_id
        wait_for(lambda: "session.expired" in [e["event"] for e in events] or close_session(kafka_zk, session),
                 timeout=30, interval=0.5)
        wait_for(lambda: "consumer.registered" in [e["event"] for e in events])
        wait_for(lambda: owners(zk, topic) == [("0", "group1_c-0"), ("1", "group1_c-0")], timeout=30)
        stat = zk.exists(f"/consumers/{GROUP}/ids/group1_c")
        assert stat is not None and stat.ephemeralOwner not in (0, old_session)
        assert [e for e in events if e["event"] == "consumer.registered"][-1]["reregistered"] is True
        produce(bootstrap_servers, topic, [b"after"], partition=1)
        assert [m.message for m in take(stream, 1)] == [b"after"]
        names = [e["event"] for e in events]
        last_registration = len(names) - 1 - names[::-1].index("consumer.registered")
        assert names.index("session.expired") < last_registration
        # the ownership invariants held before every step, those of the rebalance after the expiry too
        assert invariants.checked.count("release") >= 2 and invariants.violations == []


def test_commit_writes_only_changed_offsets_and_the_next_offset_to_read(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [b"0", b"1", b"2"])
    with create_connector(config(kafka_zk, "c", **{"auto.commit.enable": "false"})) as consumer:
        stream = consumer.create_message_streams({topic: 1})[topic][0]
        assert [m.offset for m in take(stream, 2)] == [0, 1]
        assert consumer.commit_offsets().written
        assert offsets(zk, topic) == {0: 2}  # last handed out + 1
        version = zk.exists(f"/consumers/{GROUP}/offsets/{topic}/0").mzxid
        assert not consumer.commit_offsets().written
        assert zk.exists(f"/consumers/{GROUP}/offsets/{topic}/0").mzxid == version
    assert offsets(zk, topic) == {0: 2}  # no auto-commit at shutdown either


def test_a_malformed_member_is_skipped_and_left_alone(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    zk.create(f"/consumers/{GROUP}/ids/group1_pykafka", topic.encode(), makepath=True)  # not JSON
    with create_connector(config(kafka_zk, "c")) as consumer, capture_logs() as events:
        consumer.create_message_streams({topic: 1})
        warned = [e for e in events if e["event"] == "znode.malformed"]
        assert warned and warned[0]["path"] == f"/consumers/{GROUP}/ids/group1_pykafka"
        assert owners(zk, topic) == [("0", "group1_c-0"), ("1", "group1_c-0")]
    assert zk.get(f"/consumers/{GROUP}/ids/group1_pykafka")[0] == topic.encode()


def test_invalid_configuration_names_the_key(kafka_zk):
    with pytest.raises(InvalidConfigError, match="auto.offset.reset"):
        create_connector({"zookeeper.connect": kafka_zk, "group.id": "g", "auto.offset.reset": "earliest"})
    with pytest.raises(InvalidConfigError, match="offsets.storage='redis': must be one of zookeeper, kafka"):
        create_connector({"zookeeper.connect": kafka_zk, "group.id": "g", "offsets.storage": "redis"})


def test_a_wildcard_consumer_that_matches_nothing_yet_picks_up_the_first_topic(zk, kafka_zk, bootstrap_servers,
                                                                               topic_name):
    with create_connector(config(kafka_zk, "w")) as consumer:
        stream = consumer.create_message_streams_by_filter(Whitelist(f"{topic_name}-.*"), 1)[0]
        assert consumer.topic_registry == {}
        topic = mirrored_topic(zk, bootstrap_servers, f"{topic_name}-new", 1)
        wait_for(lambda: owners(zk, topic) == [("0", "group1_w-0")])
        produce(bootstrap_servers, topic, [b"first"])
        assert [m.message for m in take(stream, 1)] == [b"first"]


def test_compression_set_consumption(zk, kafka_zk, bootstrap_servers, topic_name):
    """testCompressionSetConsumption: 200 gzip-compressed messages per partition, one consumer owns both."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    sent = {p: [f"{p}-{i}".encode() for i in range(200)] for p in range(2)}
    for p, batch in sent.items():
        produce(bootstrap_servers, topic, batch, partition=p, compression="gzip")
    with create_connector(config(kafka_zk, "consumer0")) as consumer:
        stream = consumer.create_message_streams({topic: 1}, value_decoder=bytes.decode)[topic][0]
        got = take(stream, 400)
        assert sorted(m.message for m in got) == sorted(v.decode() for batch in sent.values() for v in batch)
        for p in range(2):
            assert [m.offset for m in got if m.partition == p] == list(range(200))
        assert owners(zk, topic) == [("0", "group1_consumer0-0"), ("1", "group1_consumer0-0")]


def test_broker_and_leader_changes_do_not_rebalance(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    with create_connector(config(kafka_zk, "c")) as consumer, capture_logs() as events:
        stream = consumer.create_message_streams({topic: 1})[topic][0]
        other = open_client(kafka_zk)
        try:
            other.create("/brokers/ids/999", b'{"version":1,"host":"h","port":1,"jmx_port":-1,"timestamp":"1"}',
                         ephemeral=True)
            state = f"/brokers/topics/{topic}/partitions/0/state"
            other.set(state, other.get(state)[0])  # a controller rewriting leader/ISR
            other.set(f"/consumers/{GROUP}/ids/group1_c", zk.get(f"/consumers/{GROUP}/ids/group1_c")[0])
        finally:
            close_client(other)
        produce(bootstrap_servers, topic, [b"still flowing"])
        assert [m.message for m in take(stream, 1)] == [b"still flowing"]  # meanwhile any watch would have fired
        started = [e for e in events if e["event"] == "rebalance.started"]
        assert [e["cause"] for e in started] == ["initial"]


def test_a_rebalance_that_outlasts_shutdown_leaves_every_stream_its_end(zk, kafka_zk, bootstrap_servers, topic_name):
    """Shutdown waits for a running rebalance only so long; one that clears the queues after shutdown ended the
    streams must end them again, or a stream without consumer.timeout.ms would wait for ever."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    consumer = create_connector(config(kafka_zk, "late-rebalance"))
    stream = consumer.create_message_streams({topic: 1})[topic][0]
    consumer.shutdown()
    consumer._stop_fetching()  # what a rebalance still running at that moment does next
    assert list(stream) == []  # ended by the sentinel, not by consumer.timeout.ms

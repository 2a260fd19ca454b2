"""Fencing after a pause, against the real servers: a member woken from a pause longer than its session hands out
nothing it fetched for the partitions it held (before or after the pause) until it owns partitions again; and the
session's confirmation it is built on."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from itertools import islice
from typing import NamedTuple

import pytest
from confluent_kafka import Message, Producer
from structlog.testing import capture_logs
from support import mirrored_topic, wait_for
from time_scale import bounded, scaled

from zkconsumer import create_connector
from zkconsumer.config import ConsumerConfig, identity_decoder
from zkconsumer.consumer.consumer_iterator import FENCE_SLICE
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.message_and_metadata import FetchedRecords
from zkconsumer.consumer.partition_topic_info import ChunkQueue, PartitionTopicInfo
from zkconsumer.consumer.session_fence import SessionFence
from zkconsumer.errors import ConsumerTimeoutException
from zkconsumer.members import legacy_member
from zkconsumer.members.faults import paused
from zkconsumer.members.group import MemberGroup
from zkconsumer.zk.client import close_client, open_client
from zkconsumer.zk.session_liveness import SessionLiveness

SESSION_TIMEOUT_MS = 2000


def test_the_session_is_confirmed_by_answers_from_when_their_requests_left(zookeeper_connect):
    client = open_client(zookeeper_connect, session_timeout=4.0)
    try:
        liveness = SessionLiveness.attach(client)
        assert liveness is not None
        assert liveness.confirmed == float("-inf") and liveness.session_timeout_s == 4.0
        before = time.monotonic()
        client.exists("/")
        after = time.monotonic()
        assert before <= liveness.confirmed <= after  # the send time of the request answered
        liveness.ask()
        wait_for(lambda: liveness.confirmed > after)
        assert liveness.age() < 4.0
    finally:
        close_client(client)


def test_attached_before_the_client_starts_the_timeout_is_the_one_the_server_negotiated(zookeeper_connect):
    """The embedded server's maxSessionTimeout is 60 s: a client asking for 90 s is given 60, and a fence that
    believed 90 would hand out chunks for 30 s after the session could have expired."""
    attached: list[SessionLiveness | None] = []
    client = open_client(zookeeper_connect, session_timeout=90.0,
                         before_start=lambda c: attached.append(SessionLiveness.attach(c)))
    try:
        (liveness,) = attached
        assert liveness is not None and liveness.session_timeout_s == pytest.approx(60.0)
        assert liveness.age() < 60.0  # confirmed from the handshake
    finally:
        close_client(client)


def test_the_connector_s_fence_uses_the_negotiated_timeout(kafka_zk):
    connector = create_connector(ConsumerConfig({"zookeeper.connect": kafka_zk, "group.id": "fence-negotiated",
                                                 "zookeeper.session.timeout.ms": 90000}))
    try:
        fence = connector._fence
        assert fence is not None and fence._liveness.session_timeout_s == pytest.approx(60.0)  # the server's max
    finally:
        connector.shutdown()


def _records(offsets: range) -> FetchedRecords:
    return FetchedRecords.of([Message(topic="t", partition=0, offset=o, value=str(o).encode()) for o in offsets],
                             "t", 0)


class FencedStream(NamedTuple):
    liveness: SessionLiveness
    lost: threading.Event
    chunks: ChunkQueue
    info: PartitionTopicInfo
    stream: KafkaStream


def _fenced_stream(zk) -> FencedStream:
    """A stream of one partition behind a fence of a 2 s session (consumer.timeout.ms 100 ms). Its liveness is not
    attached to the client: the test sets its confirmation, and the loss."""
    liveness = SessionLiveness(zk, session_timeout_s=2.0)
    lost = threading.Event()
    chunks = ChunkQueue(4)
    info = PartitionTopicInfo("t", 0, chunks, 0, 0, 1024, "client")
    stream = KafkaStream(chunks, 100, identity_decoder, identity_decoder, "client", "s",
                         SessionFence(liveness, lost, threading.Event()))
    return FencedStream(liveness, lost, chunks, info, stream)


def test_a_chunk_waits_for_the_sessions_confirmation_and_is_dropped_once_the_session_is_lost(zk):
    """The fence's three outcomes on one stream: not confirmed yet (consumer.timeout.ms passes, nothing handed out,
    the chunk kept), confirmed (handed out), lost (dropped, one event)."""
    liveness, lost, chunks, info, stream = _fenced_stream(zk)
    info.enqueue(_records(range(3)))
    with pytest.raises(ConsumerTimeoutException):
        next(iter(stream))
    assert info.consumed_offset == 0 and chunks.qsize() == 0  # taken, kept, not handed out
    liveness.confirmed = time.monotonic()
    assert [m.offset for m in next(stream.chunks())] == [0, 1, 2]
    assert info.consumed_offset == 3
    liveness.confirmed = time.monotonic() - 1.5  # older than half the session timeout: no longer certain
    info.enqueue(_records(range(3, 6)))
    lost.set()
    with capture_logs() as events, pytest.raises(ConsumerTimeoutException):
        next(iter(stream))
    (fenced,) = [e for e in events if e["event"] == "stream.chunk_fenced"]
    assert (fenced["reason"], fenced["messages"], fenced["fetch_offset"]) == ("session_lost", 3, 3)
    assert fenced["confirmed_age_ms"] >= 1500 and fenced["log_level"] == "warning"
    assert info.consumed_offset == 3 and chunks.qsize() == 0


@pytest.mark.parametrize("way", ["for", "next", "chunks"])
def test_a_lease_that_ends_in_the_middle_of_a_chunk_stops_it_there_and_a_lost_session_drops_the_rest(zk, way):
    """A pause can come in the middle of a large chunk: once the confirmation it was handed out under is older than
    half the session timeout, the fence is asked again before the next message (``next``), slice (``for``) or batch
    (``chunks``), and a lost session drops the rest, which the partition's owner fetches again."""
    liveness, lost, chunks, info, stream = _fenced_stream(zk)
    size = 3 * FENCE_SLICE
    info.enqueue(_records(range(size)))
    # confirmed a little less than half the session timeout ago: chunks go on without a look for a moment more
    liveness.confirmed = time.monotonic() - 1.0 + min(scaled(0.3), 0.9)
    if way == "for":
        messages = iter(stream)
        taken = [m.offset for m in islice(messages, 10)]
    elif way == "next":
        iterator = stream.iterator()
        taken = [next(iterator).offset for _ in range(10)]
    else:
        taken = [m.offset for m in next(stream.chunks(10))]
    assert taken == list(range(10))
    wait_for(lambda: time.monotonic() > liveness.confirmed + 1.0, timeout=2)  # the pause: no longer certain
    lost.set()  # and the member learns, on waking, that its session expired
    with capture_logs() as events, pytest.raises(ConsumerTimeoutException):
        if way == "for":  # one loop: the pause came in the middle of its slice
            for message in messages:
                taken.append(message.offset)
        elif way == "next":
            while True:
                taken.append(next(iterator).offset)
        else:
            for batch in stream.chunks(10):
                taken += [m.offset for m in batch]
    handed_on = FENCE_SLICE if way == "for" else 10  # the slice under way goes out whole
    assert taken == list(range(handed_on))
    (fenced,) = [e for e in events if e["event"] == "stream.chunk_fenced"]
    assert (fenced["reason"], fenced["messages"], fenced["fetch_offset"]) == ("session_lost", size - handed_on,
                                                                             handed_on)
    assert info.consumed_offset == handed_on


def _seconds(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


@pytest.mark.timeout(200)  # its waits: 15 s for the topic, 4 x 30 s, 20 s to stop the member, 15 s to stop producing
def test_a_member_woken_after_its_session_expired_hands_out_nothing_stale(tmp_path, kafka_zk, zk, bootstrap_servers,
                                                                          topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    deliveries, events_file = tmp_path / "a.deliveries", tmp_path / "a.events"
    argv = legacy_member.command(zookeeper=kafka_zk, group="fence", topic=topic, consumer_id="a",
                                 session_timeout_ms=SESSION_TIMEOUT_MS, output=deliveries, delivery_format="timed",
                                 events_file=events_file)
    stop_producing = threading.Event()

    def keep_producing() -> None:  # so that the member has something fetched to hand out the moment it wakes
        producer = Producer({"bootstrap.servers": bootstrap_servers, "linger.ms": 5})
        number = 0
        while not stop_producing.wait(0.005):
            producer.produce(topic, value=f"v{number}".encode(), partition=number % 2)
            producer.poll(0)
            number += 1
        producer.flush(bounded(10))

    def events() -> list[dict]:
        return [json.loads(line) for line in events_file.read_text().splitlines()] if events_file.exists() else []

    def delivered() -> list[list[str]]:
        return [line.split() for line in deliveries.read_text().splitlines()] if deliveries.exists() else []

    group = MemberGroup(tmp_path)
    producer = threading.Thread(target=keep_producing, daemon=True)
    member = group.start("a", "fence_a", argv, follow=False)
    producer.start()
    try:
        wait_for(lambda: len(delivered()) > 50, timeout=30)
        registry = "/consumers/fence/ids"
        assert zk.get_children(registry)
        with paused(member.process):
            # the member can do nothing: the server expires its session and its registration with it
            wait_for(lambda: zk.get_children(registry) == [], timeout=30)
            woke = time.time()
        wait_for(lambda: any(e["event"] == "rebalance.completed" and _seconds(e["timestamp"]) > woke
                             for e in events()), timeout=30)
        # the new session's fetchers start at step 9, a moment before the rebalance's last event
        owns_again = min(_seconds(e["timestamp"]) for e in events()
                         if e["event"] == "fetcher_manager.connections_started" and _seconds(e["timestamp"]) > woke)
        wait_for(lambda: any(float(row[0]) > owns_again for row in delivered()), timeout=30)
    finally:
        stop_producing.set()
        group.stop(member, timeout=bounded(20.0))
        group.close()
        producer.join(bounded(15))
    names = [e["event"] for e in events()]
    assert "session.expired" in names  # the pause did outlast the session
    # What was left of the slice being handed out when the pause came may go out on waking (a pause between the
    # fence's look and the hand-out cannot be told from one after it): at most one slice, of one partition, in
    # order; nothing more, whatever the chunk's size.
    stale = [row for row in delivered() if woke <= float(row[0]) < owns_again]
    assert len(stale) <= FENCE_SLICE, stale[:3]
    assert len({row[2] for row in stale}) <= 1, stale[:3]
    offsets = [int(row[3]) for row in stale]
    assert all(later == earlier + 1 for earlier, later in zip(offsets, offsets[1:], strict=False)), stale[:3]
    # Usually the stream meets a chunk fetched after waking before the connector drops them all, and fences it; when
    # kazoo learns of the expiry first, the connector drops the queued chunks itself, and nothing is fenced.
    fenced = [e for e in events() if e["event"] == "stream.chunk_fenced"]
    assert all(e["reason"] in ("session_lost", "cancelled") and e["messages"] > 0 for e in fenced)

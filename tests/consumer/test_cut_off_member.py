"""A member cut off from ZooKeeper (and only from ZooKeeper: the broker still answers it) for longer than its session
timeout. The server expires its session and another member takes its partition; the cut-off member hears of that
only when it reaches the server again. It must stop delivering before the other member can start, not deliver the
partition beside its new owner until it reconnects: a member that cannot reconnect for a while (ZooKeeper restarted
several times) would otherwise deliver every message of its partition a second time, beside the new owner.

The cut is a real one: the member reaches the real ZooKeeper through a TCP relay in this test, which is closed
(connections reset, the port refusing) and later opened again on the same port."""

from __future__ import annotations

import threading
import time

import pytest
from structlog.testing import capture_logs
from support import connector_config, mirrored_topic, wait_for
from time_scale import bounded

from zkconsumer import ConsumerTimeoutException, create_connector
from zkconsumer.embedded.relay import Relay

SESSION_MS = 3000


def produce_steadily(bootstrap: str, topic: str, stop: threading.Event) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    n = 0
    while not stop.wait(0.05):
        producer.produce(topic, value=f"m{n}".encode())
        producer.poll(0)
        n += 1
    producer.flush(bounded(10))


def consume_into(stream, got: list, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        while not stop.is_set():
            try:
                for m in stream:
                    got.append((time.monotonic(), m.offset))
                    if stop.is_set():
                        return
            except ConsumerTimeoutException:
                continue

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.timeout(180)  # its waits, summed: 15 + 30 + 18 + 30 + 30 + 30 s
def test_a_member_cut_off_from_zookeeper_stops_delivering_before_another_takes_its_partition(
        zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    address, _, chroot = kafka_zk.partition("/")
    host, port = address.split(":")
    relay = Relay((host, int(port)))
    stop = threading.Event()
    producing = threading.Thread(target=produce_steadily, args=(bootstrap_servers, topic, stop), daemon=True)
    extra = {"zookeeper.session.timeout.ms": SESSION_MS, "zookeeper.connection.timeout.ms": 10_000}
    cut_off = create_connector(connector_config(f"127.0.0.1:{relay.port}/{chroot}", "aa-cut-off", **extra))
    other = create_connector(connector_config(kafka_zk, "zz-other", **extra))
    cut_got: list = []
    other_got: list = []
    try:
        # "aa-cut-off" sorts first: with both registered, the range assignor gives it the only partition.
        consume_into(cut_off.create_message_streams({topic: 1})[topic][0], cut_got, stop)
        consume_into(other.create_message_streams({topic: 1})[topic][0], other_got, stop)
        producing.start()
        wait_for(lambda: len(cut_got) > 5 and not other_got, timeout=30)

        with capture_logs() as events:
            relay.cut()
            wait_for(lambda: other_got, timeout=6 * SESSION_MS / 1000)  # its session expired; the other took over
            taken_at = other_got[0][0]
            # Both running, one of them still cut off, until the new owner has delivered what at least two session
            # timeouts of steady production (a message every 50 ms) added after the takeover: the cut-off member,
            # fetching the same partition, would deliver those too.
            top = max(offset for _, offset in cut_got + other_got)
            wait_for(lambda: other_got[-1][1] >= top + 2 * SESSION_MS // 50, timeout=30)
            late = [(t - taken_at, offset) for t, offset in cut_got if t >= taken_at]
            assert late == [], "the cut-off member kept delivering beside the partition's new owner"
            assert len(other_got) > 5
            stopped = [e for e in events if e["event"] == "zookeeper.suspended_too_long"]
            owned = [{"topic": topic, "partition": 0, "thread": "group1_aa-cut-off-0"}]
            assert stopped and stopped[0]["owned"] == owned

            relay.restore()  # it reconnects, learns of the expiry, registers again and takes its partition back
            wait_for(lambda: any(e["event"] == "session.expired" for e in events), timeout=30)
            resumed = len(cut_got)
            wait_for(lambda: len(cut_got) > resumed + 3, timeout=30)
    finally:
        stop.set()
        other.shutdown()
        cut_off.shutdown()
        relay.cut()

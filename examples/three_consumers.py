"""Three legacy consumers share one topic: each owns a third of the partitions, as the range assignor decides.

Run it on the embedded environment (`.venv/bin/zkconsumer local up` first), or point it anywhere:

    .venv/bin/python examples/three_consumers.py [--zookeeper HOST:PORT[/chroot]] [--bootstrap-server HOST:PORT]

It creates its topic with six partitions when it does not exist, and otherwise uses the partitions the topic has;
every message sent is checked by its delivery report, so none is lost silently.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import Counter

from confluent_kafka import Producer

from zkconsumer import ConsumerTimeoutException, create_connector
from zkconsumer.cli import options
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import zookeeper as zookeeper_client

PARTITIONS, MESSAGES = 6, 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_zookeeper(parser)
    options.add_bootstrap(parser)
    options.add_run_dir(parser)
    parser.add_argument("--group", default="example")
    parser.add_argument("--topic", default="three-consumers")
    args = parser.parse_args()
    zookeeper, bootstrap, topic = options.zookeeper(args), options.bootstrap(args), args.topic
    existing = fetch_metadata(admin_client(bootstrap), bootstrap).topics.get(topic)
    if existing is None:
        create_topic(bootstrap, topic, PARTITIONS)
    partitions = PARTITIONS if existing is None else len(existing.partitions)

    with zookeeper_client(zookeeper) as zk:  # the bridge mirrors a new topic into ZooKeeper within a second
        for _ in range(100):
            if zk.exists(f"/brokers/topics/{topic}"):
                break
            time.sleep(0.1)

    received: dict[str, Counter] = {}
    reports: dict[str, str] = {}
    ready, drained = threading.Barrier(4), threading.Barrier(3)

    def member(name: str) -> None:
        connector = create_connector({
            "zookeeper.connect": zookeeper, "group.id": args.group, "consumer.id": name,
            "auto.offset.reset": "smallest", "consumer.timeout.ms": 3000,
        })
        stream = connector.create_message_streams({topic: 1})[topic][0]
        ready.wait()
        counts = received.setdefault(name, Counter())
        try:
            for message in stream:  # ends with ConsumerTimeoutException once the topic is drained
                counts[message.partition] += 1
        except ConsumerTimeoutException:
            pass
        drained.wait()  # all three are done: nobody has left the group yet, so ownership is the shared one
        owned = sorted(connector.topic_registry.get(topic, {}))
        drained.wait()
        reports[name] = (f"{connector.consumer_id}: owns partitions {owned}, got {sum(counts.values())} messages "
                         f"({dict(sorted(counts.items()))})")
        connector.shutdown()

    threads = [threading.Thread(target=member, args=(f"consumer{i}",)) for i in range(1, 4)]
    for thread in threads:
        thread.start()
    ready.wait()  # all three have joined; the group settles in a rebalance or two
    producer = Producer({"bootstrap.servers": bootstrap})
    failures: list[str] = []

    def report(err: object, msg: object) -> None:  # a message the broker did not take must not vanish
        if err is not None:
            failures.append(str(err))

    for i in range(MESSAGES):
        producer.produce(topic, value=f"order-{i}".encode(), partition=i % partitions, on_delivery=report)
    unacknowledged = producer.flush(10)
    for thread in threads:
        thread.join()
    if failures or unacknowledged:
        sys.exit(f"{len(failures) + unacknowledged} of {MESSAGES} messages not delivered to {topic}: "
                 f"{'; '.join(sorted(set(failures))) or 'no acknowledgement within 10 s'}")
    for name in sorted(reports):
        print(reports[name])


if __name__ == "__main__":
    main()

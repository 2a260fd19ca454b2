"""The orders service's own consumer, as it runs in production: a confluent-kafka consumer with its own commit policy
(auto-commit off: offsets committed after processing, every COMMIT_EVERY records, and for the partitions given up in
the revocation callback) and its own rebalance callbacks.

Run by zkconsumer's migration comparison as every member of the modern protocols (``member=`` in a test,
``--member-command`` on the command line): it is told what to join through ``ZKCONSUMER_*`` environment variables
and reports what it does on stdout as JSON lines, in the words of Kafka's verifiable consumer
(``partitions_assigned``, ``partitions_revoked``, ``record_data``, ``offsets_committed``...). It leaves the group
cleanly on SIGTERM or when its stdin closes.

    python -m orders.consumer
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from types import SimpleNamespace

from confluent_kafka import Consumer, KafkaException, TopicPartition

from orders.app import handle

COMMIT_EVERY = 20  # records processed between two commits


def report(name: str, **fields) -> None:
    """One line of the verifiable consumer's output."""
    print(json.dumps({"timestamp": int(time.time() * 1000), "name": name, **fields}), flush=True)


def refs(partitions) -> list[dict]:
    return [{"topic": p.topic, "partition": p.partition} for p in partitions]


def settings() -> dict:
    """The client's settings: where and whom to join from the environment, the rest the service's own."""
    env = os.environ
    config = {
        "bootstrap.servers": env["ZKCONSUMER_BOOTSTRAP_SERVERS"],
        "group.id": env["ZKCONSUMER_GROUP_ID"],
        "client.id": env["ZKCONSUMER_CLIENT_ID"],
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    if env["ZKCONSUMER_GROUP_PROTOCOL"] == "consumer":  # KIP-848: the session is the coordinator's
        config.update({"group.protocol": "consumer", "group.remote.assignor": env["ZKCONSUMER_ASSIGNOR"]})
    else:
        config.update({"partition.assignment.strategy": env["ZKCONSUMER_ASSIGNOR"],
                       "session.timeout.ms": int(env["ZKCONSUMER_SESSION_TIMEOUT_MS"]),
                       "heartbeat.interval.ms": int(env["ZKCONSUMER_HEARTBEAT_INTERVAL_MS"])})
    if env.get("ZKCONSUMER_GROUP_INSTANCE_ID"):
        config["group.instance.id"] = env["ZKCONSUMER_GROUP_INSTANCE_ID"]
    if env.get("ZKCONSUMER_CLIENT_CONFIG"):  # the servers' security settings (SASL, SSL), where they need some
        config.update(client_properties(env["ZKCONSUMER_CLIENT_CONFIG"]))
    return config


def client_properties(path: str) -> dict:
    """A file of ``key=value`` client properties (``#`` comments and blank lines left out)."""
    with open(path, encoding="utf-8") as properties:
        lines = [line.strip() for line in properties]
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


class OrdersConsumer:
    def __init__(self) -> None:
        self.consumer = Consumer(settings())
        self.processed: dict[tuple[str, int], int] = {}  # the next offset to commit, per partition processed
        self.since_commit = 0

    def commit(self, partitions=None) -> None:
        """Commit what was processed (of ``partitions`` only, when given), synchronously."""
        wanted = None if partitions is None else {(p.topic, p.partition) for p in partitions}
        offsets = [TopicPartition(t, p, o) for (t, p), o in self.processed.items()
                   if wanted is None or (t, p) in wanted]
        if not offsets:
            return
        committed = [{"topic": o.topic, "partition": o.partition, "offset": o.offset} for o in offsets]
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            report("offsets_committed", offsets=committed, success=False, error=str(exc))
            return
        report("offsets_committed", offsets=committed, success=True)
        for o in offsets:
            self.processed.pop((o.topic, o.partition), None)
        self.since_commit = 0

    def on_assign(self, consumer, partitions) -> None:
        report("partitions_assigned", partitions=refs(partitions))

    def on_revoke(self, consumer, partitions) -> None:
        """Before giving partitions up: commit what was processed of them, so that their next owner starts there."""
        self.commit(partitions)
        report("partitions_revoked", partitions=refs(partitions))

    def on_lost(self, consumer, partitions) -> None:
        """Someone else may own them already: nothing to commit."""
        for p in partitions:
            self.processed.pop((p.topic, p.partition), None)
        report("partitions_lost", partitions=refs(partitions))

    def run(self, stop: threading.Event) -> None:
        report("startup_complete")
        self.consumer.subscribe([os.environ["ZKCONSUMER_TOPIC"]], on_assign=self.on_assign,
                                on_revoke=self.on_revoke, on_lost=self.on_lost)
        try:
            while not stop.is_set():
                message = self.consumer.poll(0.1)
                if message is None or message.error() is not None:
                    continue
                handle(SimpleNamespace(topic=message.topic(), partition=message.partition(), offset=message.offset(),
                                       key=message.key(), value=message.value()))
                report("record_data", topic=message.topic(), partition=message.partition(), offset=message.offset(),
                       key=(message.key() or b"").decode(), value=(message.value() or b"").decode())
                self.processed[(message.topic(), message.partition())] = message.offset() + 1
                self.since_commit += 1
                if self.since_commit >= COMMIT_EVERY:
                    self.commit()
        finally:
            self.commit()
            self.consumer.close()  # the revocation callback runs, and the member leaves the group
            report("shutdown_complete")


def main() -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()  # stdin closed: leave
    OrdersConsumer().run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())

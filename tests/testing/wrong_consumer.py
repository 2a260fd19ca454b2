"""A consumer written wrong on purpose: it commits each record before processing it, and the member named in
``--crash`` exits between the commit and the processing of its ``--after``-th record, as a process killed at that
moment would. The record it committed is never processed by anyone: the comparison must say it was lost.

Reports in the verifiable consumer's JSON lines (docs: writing a member in another language); leaves on SIGTERM or
when stdin closes.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time

from confluent_kafka import Consumer


def report(name: str, **fields) -> None:
    print(json.dumps({"timestamp": int(time.time() * 1000), "name": name, **fields}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crash", default="a", help="the member (ZKCONSUMER_MEMBER) that crashes")
    parser.add_argument("--after", type=int, default=10, help="records it processes before the one it loses")
    args = parser.parse_args()
    env = os.environ
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    config = {"bootstrap.servers": env["ZKCONSUMER_BOOTSTRAP_SERVERS"], "group.id": env["ZKCONSUMER_GROUP_ID"],
              "client.id": env["ZKCONSUMER_CLIENT_ID"], "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    if env["ZKCONSUMER_GROUP_PROTOCOL"] == "consumer":
        config.update({"group.protocol": "consumer", "group.remote.assignor": env["ZKCONSUMER_ASSIGNOR"]})
    else:
        config.update({"partition.assignment.strategy": env["ZKCONSUMER_ASSIGNOR"],
                       "session.timeout.ms": int(env["ZKCONSUMER_SESSION_TIMEOUT_MS"])})
    consumer = Consumer(config)

    def refs(partitions) -> list[dict]:
        return [{"topic": p.topic, "partition": p.partition} for p in partitions]

    consumer.subscribe([env["ZKCONSUMER_TOPIC"]],
                       on_assign=lambda c, ps: report("partitions_assigned", partitions=refs(ps)),
                       on_revoke=lambda c, ps: report("partitions_revoked", partitions=refs(ps)))
    crashes = env["ZKCONSUMER_MEMBER"] == args.crash
    processed = 0
    try:
        while not stop.is_set():
            message = consumer.poll(0.1)
            if message is None or message.error() is not None:
                continue
            consumer.commit(message=message, asynchronous=False)  # the bug: committed before it is processed
            report("offsets_committed", success=True, offsets=[
                {"topic": message.topic(), "partition": message.partition(), "offset": message.offset() + 1}])
            if crashes and processed == args.after:
                os._exit(1)  # dies before processing what it committed
            report("record_data", topic=message.topic(), partition=message.partition(), offset=message.offset(),
                   key=(message.key() or b"").decode(), value=(message.value() or b"").decode())
            processed += 1
    finally:
        consumer.close()
        report("shutdown_complete")
    return 0


if __name__ == "__main__":
    sys.exit(main())

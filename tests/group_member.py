"""One member of a consumer group, as its own process, for the multi-process tests.

Usage: python tests/group_member.py ZOOKEEPER GROUP TOPIC CONSUMER_ID OUTPUT [SESSION_TIMEOUT_MS]

Appends ``partition offset value`` per message to OUTPUT (flushed at once, so a SIGKILL loses nothing already
written) and leaves the group cleanly on SIGTERM.
"""

from __future__ import annotations

import signal
import sys
import threading

from zkconsumer import ConsumerTimeoutException, create_connector


def main() -> int:
    zookeeper, group, topic, consumer_id, output = sys.argv[1:6]
    session_ms = sys.argv[6] if len(sys.argv) > 6 else "6000"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    connector = create_connector({
        "zookeeper.connect": zookeeper, "group.id": group, "consumer.id": consumer_id,
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200, "auto.commit.interval.ms": 200,
        "zookeeper.session.timeout.ms": session_ms, "rebalance.backoff.ms": 300, "rebalance.max.retries": 10,
        "refresh.leader.backoff.ms": 100,
    })
    stream = connector.create_message_streams({topic: 1})[topic][0]
    with open(output, "a", buffering=1) as out:
        while not stop.is_set():
            try:
                for message in stream:
                    out.write(f"{message.partition} {message.offset} {message.message.decode()}\n")
                    if stop.is_set():
                        break
            except ConsumerTimeoutException:
                continue
    connector.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

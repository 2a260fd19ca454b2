"""A killed member's partitions shown falling behind (:mod:`zkconsumer.demo.falling_behind`), against the real
servers: its owner znode and committed offset stay as a SIGKILLed member leaves them, messages keep coming, and the
lag told each second grows until another member's rebalance says it owns the partition."""

from __future__ import annotations

import io
import re

from support import produce, wait_for

from zkconsumer.demo.falling_behind import FallingBehind
from zkconsumer.kafka.topics import create_topic


def test_the_lag_of_a_dead_member_s_partition_grows_until_another_owns_it(zk, kafka_zk, bootstrap_servers,
                                                                         topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic_name, [b"m"] * 3, partition=0)
    group = f"{topic_name}-g"
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}"))
    zk.create(f"/consumers/{group}/offsets/{topic_name}/0", b"3", makepath=True)
    zk.create(f"/consumers/{group}/owners/{topic_name}/0", f"{group}_c2-0".encode(), makepath=True)  # as left
    out = io.StringIO()
    behind = FallingBehind(kafka_zk, bootstrap_servers, group, out, rate=5)
    dead = f"{group}_c2"
    partition = [{"topic": topic_name, "partition": 0, "thread": f"{dead}-0"}]
    behind.event({"event": "rebalance.completed", "consumer_id": dead, "owned": partition})
    behind.event({"event": "demo.member_killed", "consumer_id": dead, "pid": 1, "signal": "SIGKILL"})
    try:
        wait_for(lambda: behind.reports >= 2, timeout=20)
    finally:
        # another member's rebalance takes the partition: the watch ends
        behind.event({"event": "rebalance.completed", "consumer_id": f"{group}_c1",
                      "owned": [{**partition[0], "thread": f"{group}_c1-0"}]})
    assert behind._thread is None
    lines = out.getvalue().splitlines()
    assert lines[0] == (f"  ... {dead} was killed: nobody fetches {topic_name}-0 until its session expires; 5 messages "
                        f"a second go to each")
    lags = [int(m.group(1)) for m in re.finditer(rf"{topic_name}-0 lag (\d+) \(offset 3, log end \d+, owner "
                                                 rf"{dead}-0\)", out.getvalue())]
    assert len(lags) >= 2 and lags == sorted(lags) and lags[-1] > lags[0] >= 5, out.getvalue()

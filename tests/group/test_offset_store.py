"""WriteBehind: starting offsets put one by one from the fetcher threads reach ZooKeeper together. Pure threads."""

from __future__ import annotations

import threading

from support import wait_for
from time_scale import bounded

from zkconsumer.group.offset_store import WriteBehind


def test_puts_made_while_a_flush_runs_go_together_in_the_next_one():
    flushed: list[dict] = []
    hold = threading.Event()

    def flush(batch: dict) -> None:
        flushed.append(batch)
        hold.wait(bounded(5))

    writer: WriteBehind[int] = WriteBehind(flush, "test-write-behind")
    writer.put(-1, "first")
    wait_for(lambda: flushed)  # the first flush is running, held
    for key in range(1000):
        writer.put(key, key)
    writer.put(7, "latest")  # a key put twice is written once, with its latest value
    hold.set()
    assert writer.drain()
    assert flushed == [{-1: "first"}, {**{k: k for k in range(1000)}, 7: "latest"}]
    writer.put(5, "at close")
    writer.close()
    assert flushed[-1] == {5: "at close"}  # close flushes what is pending before it stops

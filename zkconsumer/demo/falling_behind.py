"""A killed member's partitions shown falling behind while its ZooKeeper session runs out.

SIGKILL leaves the member's owner znodes in place until ZooKeeper expires its session: nobody fetches its partitions
meanwhile, and nothing says so unless messages keep coming. A :class:`FallingBehind` is one of the demo's observers
(:class:`zkconsumer.demo.rebalance_demo.DemoObserver`'s methods): when the demo records ``demo.member_killed``, it
produces ``rate`` messages a second to each partition the member owned (its last ``rebalance.completed`` said which)
and, once a second, tells each one's committed offset, log end, lag and owner znode, as ``groups describe`` reads them
(:func:`zkconsumer.tools.offset_checker.describe_group`), until another member owns them again (its
``rebalance.completed`` says so) or the scene settles:

```
  ... demo_c2 was killed: nobody fetches demo-2, demo-3 until its session expires; 10 messages a second go to each
      +1.0 s  demo-2 lag 10 (offset 100, log end 110, owner demo_c2-0)   demo-3 lag 10 (...)
      +2.0 s  demo-2 lag 20 ...
```

Its lines are written from a thread of its own, a whole line at a time.
"""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO

from confluent_kafka import KafkaException, Producer
from kazoo.exceptions import KazooException

from zkconsumer.errors import ZkConsumerError
from zkconsumer.events import catalogue as ev
from zkconsumer.tools.offset_checker import describe_group
from zkconsumer.trace.timeline import partition_refs
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.cluster import registered_bootstrap

INTERVAL_S = 1.0


class FallingBehind:
    def __init__(self, zookeeper_connect: str, bootstrap: str | None, group: str, out: TextIO, rate: int = 10) -> None:
        self.zookeeper_connect = zookeeper_connect
        self.bootstrap = bootstrap
        self.group = group
        self.out = out
        self.rate = rate
        self._owned: dict[str, list[tuple[str, int]]] = {}  # consumer id -> what its last rebalance gave it
        self._watched: set[tuple[str, int]] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.reports = 0  # lines of lag told

    # --- the demo's observer ------------------------------------------------------------------------------------

    def scene_started(self, scene: Any) -> None:
        pass

    def action_played(self, scene: Any, action: Any) -> None:
        pass

    def settled(self, result: Any) -> None:
        self.stop()

    def event(self, event: dict[str, Any]) -> None:
        name = event.get("event")
        who = str(event.get("consumer_id", ""))
        if name == ev.REBALANCE_COMPLETED:
            owned = [(ref.topic, ref.partition) for ref in partition_refs(event.get("owned"))]
            self._owned[who] = owned
            with self._lock:
                self._watched -= set(owned)  # fetched again
                done = not self._watched
            if done:
                self.stop()
        elif name == ev.DEMO_MEMBER_KILLED and self._owned.get(who):
            self.start(who, self._owned[who])

    # --- watching -----------------------------------------------------------------------------------------------

    def start(self, killed: str, partitions: list[tuple[str, int]]) -> None:
        self.stop()
        with self._lock:
            self._watched = set(partitions)
        shown = ", ".join(f"{t}-{p}" for t, p in partitions)
        intro = (f"  ... {killed} was killed: nobody fetches {shown} until its session expires; {self.rate} messages "
                 f"a second go to each")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(intro,), name="demo-falling-behind", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        self._thread = None

    def _run(self, intro: str) -> None:
        """Told after the first look, so that it follows the demo's own line about the kill."""
        began = time.monotonic()
        producer = None
        told_intro = False  # once per kill watched
        try:
            with zookeeper(self.zookeeper_connect, quiet=True) as zk:
                bootstrap = self.bootstrap or registered_bootstrap(zk)
                producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "message.timeout.ms": 5000})
                while not self._stop.is_set():
                    tick = time.monotonic()
                    with self._lock:
                        watched = sorted(self._watched)
                    if not watched:
                        return
                    for topic, partition in watched:
                        for i in range(max(1, round(self.rate * INTERVAL_S))):
                            # one message a request: the embedded broker counts a batch as one offset
                            producer.produce(topic, value=f"behind-{i}".encode(), partition=partition)
                            producer.flush(1.0)
                    rows = {(r.topic, r.partition): r for r in describe_group(zk, self.group).offsets.rows}
                    told = []
                    for key in watched:
                        row = rows.get(key)
                        if row is not None:
                            told.append(f"{key[0]}-{key[1]} lag {row.lag if row.lag is not None else '?'} (offset "
                                        f"{row.offset}, log end {row.log_size}, owner {row.owner or 'none'})")
                    if told and not self._stop.is_set():
                        if not told_intro:
                            self._say(intro)
                            told_intro = True
                        self.reports += 1
                        self._say(f"      +{time.monotonic() - began:.1f} s  " + "   ".join(told))
                    self._stop.wait(max(0.0, INTERVAL_S - (time.monotonic() - tick)))
        except (ZkConsumerError, KazooException, KafkaException, BufferError, OSError) as exc:  # servers gone
            self._say(f"      (could not read the lag: {type(exc).__name__}: {exc})")
        finally:
            if producer is not None:
                producer.flush(1.0)

    def _say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

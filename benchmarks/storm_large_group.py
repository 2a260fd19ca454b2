"""A real group of many members, legacy on a three-server ZooKeeper ensemble at Kafka's defaults or modern at Kafka
4.x's coordinator, beside the storm model's prediction of the same run: how large a group this machine hosts, and how
long it takes to settle.

Run: ``.venv/bin/python benchmarks/storm_large_group.py --members 100 [--partitions 1000] [--servers 3]
[--max-seconds 300]``. Starts a :class:`~zkconsumer.embedded.ensemble.LocalEnsemble` and a broker the metadata bridge
registers in it, writes a topic to ZooKeeper the ZooKeeper way (as the calibration does: the broker does not know it,
so the members' leader finders find no leader and keep trying, CPU the model does not charge),
constructs ``--members`` connectors in this process (sessions open), then starts them at once, a thread each calling
``create_message_streams``, at Kafka 0.10.0.1's defaults (``zookeeper.session.timeout.ms`` 6 s,
``rebalance.backoff.ms`` 2 s, ``rebalance.max.retries`` 4) and with committed offsets absent (a new group). Time to
stable: from the start to the first moment, polled every half second, at which every partition is owned once in
range shares with one owner znode each, held for ``--quiet`` seconds. Also printed: the members' ZooKeeper requests
(counted at their kazoo clients, as the calibration does), first rebalances that raised
(ConsumerRebalanceFailedException, the members then owning nothing until a watch fires), rebalances that failed in
the background, this process's CPU, threads and resident memory, the load average, and the model's prediction of
the same run. ``--protocol`` eager-range, cooperative-sticky or kip848-uniform plays a modern group of the same size
at Apache Kafka 4.x's own coordinator instead (a KRaft node; librdkafka members polled by threads of this process,
as the calibration's modern runs: time to stable and partition-seconds paused from their callbacks, the broker's
CPU). The model's prediction of each run is :func:`storm_tables.large_prediction`'s: the frozen model with its
calibration. ``--out FILE`` writes the run's own figures, which ``benchmarks/storm_tables.py`` puts in
docs/storm.md beside the model's prediction made again. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

import structlog
from bench_support import machine, wait_for_brokers
from rebalance import shared_evenly, start_streams
from storm_calibration import MODERN, RequestCounter, run_modern
from storm_tables import RECORD, large_prediction

from zkconsumer.storm import calibration as cal

KAFKA_DEFAULTS = {"zookeeper.session.timeout.ms": 6_000, "rebalance.backoff.ms": 2_000, "rebalance.max.retries": 4}


def drop(*_: object) -> None:
    raise structlog.DropEvent


def write_topic(zk: Any, name: str, partitions: int) -> None:
    """The topic's znode as Kafka's admin wrote it: one replica on broker 0, which never registers."""
    assignment = {str(p): [0] for p in range(partitions)}
    zk.create(f"/brokers/topics/{name}", json.dumps({"version": 1, "partitions": assignment}).encode(),
              makepath=True)


def run_kafka(args: argparse.Namespace) -> dict[str, Any]:
    """A modern group of ``--members`` librdkafka members at Apache Kafka 4.x's own coordinator (a KRaft node), started
    at once as the calibration's modern runs are (:func:`storm_calibration.run_modern`)."""
    from zkconsumer.embedded.kafka_broker import LocalKafkaKRaft

    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="zkconsumer-large-") as tmp, \
            LocalKafkaKRaft(Path(tmp) / "kafka-4") as broker:
        assert broker.record is not None
        spec = cal.RunSpec(args.protocol, cal.AT_ONCE, args.members, args.partitions, "large")
        played = run_modern(broker.address, broker.record.pid, spec)
    return {"protocol": args.protocol, "members": args.members, "partitions": args.partitions,
            "time_to_stable_s": played.figures.time_to_stable_s,
            "partition_seconds_paused": round(played.figures.partition_seconds_paused, 1),
            "start_interval_ms": played.spec.start_interval_ms, "cpu_s": round(played.cpu_s, 1),
            "broker_cpu_s": round(played.front_cpu_s, 1), "threads": None,  # the members closed: not counted
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "load_before": [round(x, 1) for x in load], "load_after": [round(x, 1) for x in os.getloadavg()],
            "machine": machine()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from zkconsumer import ConsumerConfig, create_connector
    from zkconsumer.bridge.metadata_bridge import MetadataBridge
    from zkconsumer.embedded.broker import LocalTansu
    from zkconsumer.embedded.ensemble import LocalEnsemble
    from zkconsumer.types import TopicPartition
    from zkconsumer.zk import paths
    from zkconsumer.zk.client import close_client, open_client

    counter = RequestCounter()
    topic, group = "storm-large", f"storm-large-{args.members}"
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zkconsumer-large-")))
        ensemble = stack.enter_context(LocalEnsemble(tmp / "zookeeper", args.servers))
        broker = LocalTansu(tmp / "broker")
        broker.start()
        stack.callback(broker.stop)
        # the broker registered in the ensemble as the calibration's is: members find a cluster, not the topic's leader
        stack.enter_context(MetadataBridge(ensemble.connect, broker.bootstrap, interval_ms=250).running())
        zk = open_client(ensemble.connect)
        wait_for_brokers(zk)
        write_topic(zk, topic, args.partitions)
        props = {"zookeeper.connect": ensemble.connect, "group.id": group, **KAFKA_DEFAULTS}
        names = [f"m{i:03d}" for i in range(args.members)]
        connectors = [create_connector(ConsumerConfig({**props, "consumer.id": n})) for n in names]
        counter.tracked.update(id(c.zk) for c in connectors)
        everything = {TopicPartition(topic, p) for p in range(args.partitions)}
        owners_dir = paths.GroupTopicDirs(group, topic).owner_dir
        errors: list[BaseException] = []
        load = os.getloadavg()
        requests_before, _ = counter.snapshot()
        cpu = time.process_time()
        started = time.monotonic()
        threads = [threading.Thread(target=start_streams, args=(c, topic, errors), daemon=True) for c in connectors]
        for thread in threads:
            thread.start()
        stable_at: float | None = None
        deadline = started + args.max_seconds
        while time.monotonic() < deadline:
            time.sleep(0.5)
            if shared_evenly(zk, connectors, everything, owners_dir):
                stable_at = stable_at or time.monotonic()
                if time.monotonic() - stable_at >= args.quiet:
                    break
            else:
                stable_at = None
        figures = {
            "protocol": args.protocol, "members": args.members, "partitions": args.partitions, "servers": args.servers,
            "time_to_stable_s": None if stable_at is None else round(stable_at - started, 2),
            "zookeeper_requests": counter.snapshot()[0] - requests_before,
            "first_rebalances_raised": sum(type(e).__name__ == "ConsumerRebalanceFailedException" for e in errors),
            "other_errors": sorted({type(e).__name__ for e in errors} - {"ConsumerRebalanceFailedException"}),
            "background_rebalances_failed": sum(getattr(c, "_failed_rebalances", 0) for c in connectors),
            "cpu_s": round(time.process_time() - cpu, 1), "threads": threading.active_count(),
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "load_before": [round(x, 1) for x in load], "load_after": [round(x, 1) for x in os.getloadavg()],
            "machine": machine(),
        }
        stoppers = [threading.Thread(target=c.shutdown) for c in connectors]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join(timeout=60)
        close_client(zk)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=1_000)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--quiet", type=float, default=2.0, help="seconds the group must stay shared (2)")
    parser.add_argument("--protocol", default="legacy-range", choices=("legacy-range", *MODERN),
                        help="legacy-range (a ZooKeeper ensemble) or a modern protocol (Kafka 4.x's coordinator)")
    parser.add_argument("--out", type=Path, help="also write the run's figures here (JSON), as storm_tables reads them")
    args = parser.parse_args()
    if args.members < 1 or args.partitions < 1 or args.servers < 1:
        raise SystemExit("--members, --partitions and --servers must be at least 1")
    structlog.configure(processors=[drop])  # a hundred members' events are not printed
    doc = {"command": " ".join(sys.argv),
           "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "max_seconds": args.max_seconds,
           "real": run(args) if args.protocol == "legacy-range" else run_kafka(args)}
    fitted = cal.calibrate(cal.load_record(RECORD.read_text(encoding="utf-8"))).parameters
    model = large_prediction(fitted, doc["real"], args.max_seconds)
    print(json.dumps({**doc, "model": asdict(model)}, indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())

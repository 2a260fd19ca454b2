"""``zkconsumer demo``: the README's main job.

For now it brings up the embedded environment, creates a topic and shows what ZooKeeper then holds, the
cluster as a legacy consumer will read it; the teaching demo of the rebalance builds on this.
"""

from __future__ import annotations

import argparse
import time

from zkconsumer import cluster
from zkconsumer.cli import options
from zkconsumer.environment import LocalEnvironment
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka_metadata import admin_client, fetch_metadata
from zkconsumer.topics import create_topic
from zkconsumer.zkclient import zookeeper


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="bring up the embedded environment and show the cluster in ZooKeeper")
    parser.add_argument("--topic", default="demo")
    parser.add_argument("--partitions", type=int, default=3)
    options.add_run_dir(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    env = LocalEnvironment(args.run_dir)
    endpoints = env.up()
    zk, bootstrap = endpoints["zookeeper"], endpoints["bootstrap_servers"]
    print(f"embedded environment: zookeeper {zk}, broker {bootstrap} (run directory {env.run_dir})")
    if args.topic not in fetch_metadata(admin_client(bootstrap), bootstrap).topics:
        create_topic(bootstrap, args.topic, args.partitions)
        print(f"created topic {args.topic} with {args.partitions} partitions")
    with zookeeper(zk) as client:
        deadline = time.monotonic() + 15
        while args.topic not in cluster.read_topic_names(client):
            if time.monotonic() > deadline:
                raise ServerUnavailableError(f"the bridge did not mirror topic {args.topic} into ZooKeeper in 15 s")
            time.sleep(0.1)
        print("\nwhat a legacy consumer reads from ZooKeeper:")
        for broker in cluster.read_brokers(client):
            print(f"  /brokers/ids/{broker.id}  -> {broker.address}")
        for topic in cluster.read_topic_names(client):
            assignment = cluster.read_topic(client, topic)
            print(f"  /brokers/topics/{topic}  partitions {assignment.partitions}")
            for p in assignment.partitions:
                state = cluster.read_partition_state(client, topic, p)
                print(f"      partition {p}: leader {state.leader}, isr {list(state.isr)}, "
                      f"leader_epoch {state.leader_epoch}")
    print("\nthe environment keeps running; stop it with: zkconsumer local down")
    return 0

"""``zkconsumer topics create|alter|describe|place``: topics through the broker's admin API, or through ZooKeeper as
``kafka-topics.sh --zookeeper`` of Kafka 0.10 made them.

``create`` and ``alter`` take the broker's admin API unless ``--zookeeper`` is given: there ``--zookeeper`` chooses
the path rather than naming a default server, so it is never taken from ``$ZK_CONNECT`` or the local environment.
``describe`` reads ZooKeeper only, and ``place`` needs no server at all: it shows where Kafka's placement puts the
replicas, for teaching and for checking a plan before it is written.

The ZooKeeper path's modules are imported by its handlers only, and the broker's by its own, so ``place`` starts
without kazoo or confluent-kafka.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from zkconsumer.admin import replica_placement
from zkconsumer.admin.replica_placement import BrokerMetadata, RackAwareMode
from zkconsumer.cli import COMMANDS, options
from zkconsumer.errors import UsageError

ZOOKEEPER_PATH_HELP = ("go through ZooKeeper as kafka-topics.sh --zookeeper did: the replicas placed here, "
                       "/brokers/topics/NAME written (without it: the broker's admin API)")
REPLICA_ASSIGNMENT_HELP = ("partitions separated by commas, each partition's brokers by colons, the first the "
                           "preferred leader: 0:1,1:2 (with --zookeeper)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("topics", help=COMMANDS["topics"])
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    create = actions.add_parser("create", help="create a topic")
    create.add_argument("name", help="the topic's name")
    create.add_argument("--partitions", type=int, help="the number of partitions (required unless "
                        "--replica-assignment is given)")
    create.add_argument("--replication-factor", type=int, help="replicas of each partition (default 1 through the "
                        "broker; required with --zookeeper unless --replica-assignment is given)")
    create.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                        help="a topic configuration override, repeatable (with --zookeeper)")
    create.add_argument("--if-not-exists", action="store_true",
                        help="a topic of this name already there is no error: it is left as it is")
    alter = actions.add_parser("alter", help="add partitions to a topic")
    alter.add_argument("name", help="the topic's name")
    alter.add_argument("--partitions", type=int, required=True, help="the new, larger partition count")
    for sub in (create, alter):
        options.add_bootstrap(sub)
        options.add_run_dir(sub)
        options.add_zookeeper(sub, help=ZOOKEEPER_PATH_HELP)
        sub.add_argument("--replica-assignment", metavar="B:B,B:B,...", help=REPLICA_ASSIGNMENT_HELP)
        sub.add_argument("--disable-rack-aware", action="store_true",
                         help="place replicas without the brokers' racks (with --zookeeper)")
        sub.add_argument("--dry-run", action="store_true",
                         help="print the znodes that would be written, write nothing (with --zookeeper)")
    create.set_defaults(handler=run_create, command_parser=create)
    alter.set_defaults(handler=run_alter, command_parser=alter)

    describe = actions.add_parser("describe", help="describe topics from ZooKeeper, as kafka-topics.sh --describe")
    describe.add_argument("name", nargs="?", help="one topic (default: every topic)")
    options.add_zookeeper(describe)
    options.add_run_dir(describe)
    options.add_json(describe, help="a JSON list, one object per topic (topic, partition_count, replication_factor, "
                     "configs, partitions: partition, leader, replicas, isr), instead of the lines")
    describe.set_defaults(handler=run_describe)

    place = actions.add_parser("place", help="show where Kafka's placement puts a topic's replicas (no server)")
    place.add_argument("--brokers", required=True, type=_broker_ids, metavar="ID,ID,...",
                       help="the ids of the brokers to place on")
    place.add_argument("--racks", type=_racks, default={}, metavar="ID:RACK,...",
                       help="the brokers' racks (all of them, or none)")
    place.add_argument("--partitions", type=int, required=True, help="the number of partitions to place")
    place.add_argument("--replication-factor", type=int, required=True, help="replicas of each partition")
    place.add_argument("--start-index", type=int, default=-1, metavar="N",
                       help="the first partition's leader and the first shift (default: random, as Kafka drew them)")
    place.add_argument("--start-partition-id", type=int, default=-1, metavar="M",
                       help="number the partitions from M, as when adding partitions to a topic of M")
    place.add_argument("--seed", type=int, metavar="S", help="draw the random start from this seed, to repeat it")
    place.add_argument("--disable-rack-aware", action="store_true", help="place replicas ignoring the racks")
    options.add_json(place, help='print {"assignment": {"PARTITION": [BROKER, ...]}} instead of the tables')
    place.set_defaults(handler=run_place)


def _broker_ids(text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of broker ids") from None
    if len(set(ids)) != len(ids):
        raise argparse.ArgumentTypeError(f"{text!r} lists a broker twice")
    return ids


def _racks(text: str) -> dict[int, str]:
    racks: dict[int, str] = {}
    for entry in text.split(","):
        broker, _, rack = entry.partition(":")
        if not broker.strip().isdigit() or not rack.strip():
            raise argparse.ArgumentTypeError(f"{entry!r} is not BROKER_ID:RACK")
        racks[int(broker)] = rack.strip()
    return racks


def _mode(args: argparse.Namespace) -> RackAwareMode:
    return RackAwareMode.DISABLED if args.disable_rack_aware else RackAwareMode.ENFORCED


def _broker_path_only(args: argparse.Namespace, zookeeper_only: dict[str, bool]) -> None:
    """Refuse options of the ZooKeeper path given without ``--zookeeper`` instead of ignoring them."""
    given = [flag for flag, present in zookeeper_only.items() if present]
    if given:
        raise UsageError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} --zookeeper (the broker's "
                         f"admin API places the replicas itself)")


def _zookeeper_path(args: argparse.Namespace) -> bool:
    if args.zookeeper and args.bootstrap_server:
        raise UsageError("give --zookeeper or --bootstrap-server, not both: they are two ways to change a topic")
    return bool(args.zookeeper)


def run_create(args: argparse.Namespace) -> int:
    if _zookeeper_path(args):
        return _create_in_zookeeper(args)
    _broker_path_only(args, {"--replica-assignment": args.replica_assignment is not None,
                             "--config": bool(args.config), "--disable-rack-aware": args.disable_rack_aware,
                             "--dry-run": args.dry_run})
    if args.partitions is None:
        args.command_parser.error("the following arguments are required: --partitions")
    from zkconsumer.kafka import topics

    bootstrap = options.bootstrap(args)
    replication_factor = 1 if args.replication_factor is None else args.replication_factor
    if not topics.create_topic(bootstrap, args.name, args.partitions, replication_factor,
                               if_not_exists=args.if_not_exists):
        print(f"topic {args.name} already exists at {bootstrap}; left as it is")
        return 0
    _wait_for_the_bridge(args, bootstrap, args.name, args.partitions)
    print(f"created topic {args.name} with {args.partitions} partitions at {bootstrap}")
    return 0


def _wait_for_the_bridge(args: argparse.Namespace, bootstrap: str, name: str, partitions: int) -> None:
    """On a ``zkconsumer local`` environment, until its bridge has written the topic into ZooKeeper
    (:mod:`zkconsumer.embedded.bridged_topic`); a warning if it has not."""
    from zkconsumer.embedded.bridged_topic import wait_until_bridged

    warning = wait_until_bridged(getattr(args, "run_dir", None), bootstrap, name, partitions)
    if warning is not None:
        print(f"zkconsumer topics: warning: {warning}", file=sys.stderr)


def _create_in_zookeeper(args: argparse.Namespace) -> int:
    from zkconsumer.admin import topic_plans, zk_topics
    from zkconsumer.cli.zookeeper_session import zookeeper_session
    from zkconsumer.kafka.topic_names import has_collision_chars, validate_topic_name
    from zkconsumer.zk import paths

    validate_topic_name(args.name)
    request = topic_plans.CreateRequest(
        args.name, args.partitions, args.replication_factor, args.replica_assignment,
        topic_plans.parse_config_options(args.config), _mode(args))
    if args.replica_assignment is not None:
        replica_placement.parse_replica_assignment(args.replica_assignment)  # bad input before any connection
    if has_collision_chars(args.name):
        print(topic_plans.COLLISION_WARNING, file=sys.stderr)
    with zookeeper_session(args) as zk:
        if args.if_not_exists and zk.exists(paths.topic_path(args.name)):
            print(f'Topic "{args.name}" already exists; left as it is.')
            return 0
        creation = zk_topics.prepare_creation(zk, request)
        if args.dry_run:
            print(f"would write {paths.topic_config_path(args.name)} {creation.config_data.decode()}")
            print(f"would write {paths.topic_path(args.name)} {creation.topic_data.decode()}")
            return 0
        zk_topics.write_creation(zk, creation)
    print(f'Created topic "{args.name}".')
    return 0


def run_alter(args: argparse.Namespace) -> int:
    if _zookeeper_path(args):
        return _alter_in_zookeeper(args)
    _broker_path_only(args, {"--replica-assignment": args.replica_assignment is not None,
                             "--disable-rack-aware": args.disable_rack_aware, "--dry-run": args.dry_run})
    from zkconsumer.kafka import topics

    bootstrap = options.bootstrap(args)
    topics.alter_partitions(bootstrap, args.name, args.partitions)
    _wait_for_the_bridge(args, bootstrap, args.name, args.partitions)
    print(f"topic {args.name} now has {args.partitions} partitions at {bootstrap}")
    return 0


def _alter_in_zookeeper(args: argparse.Namespace) -> int:
    from zkconsumer.admin import topic_plans, zk_topics
    from zkconsumer.cli.zookeeper_session import zookeeper_session
    from zkconsumer.kafka.topic_names import validate_topic_name
    from zkconsumer.zk import paths

    validate_topic_name(args.name)
    if args.replica_assignment is not None:
        replica_placement.parse_replica_assignment(args.replica_assignment)
    with zookeeper_session(args) as zk:
        addition = zk_topics.prepare_addition(zk, args.name, args.partitions, args.replica_assignment, _mode(args))
        if args.dry_run:
            print(f"would write {paths.topic_path(args.name)} {addition.topic_data.decode()} "
                  f"(over version {addition.version})")
            return 0
        print(topic_plans.PARTITION_WARNING, file=sys.stderr)
        zk_topics.write_addition(zk, addition)
    print("Adding partitions succeeded!")
    return 0


def run_describe(args: argparse.Namespace) -> int:
    from zkconsumer.admin import topic_plans, zk_topics
    from zkconsumer.cli.zookeeper_session import zookeeper_session

    with zookeeper_session(args) as zk:
        if args.json:
            print(json.dumps(zk_topics.describe(zk, args.name, render=topic_plans.describe_json), indent=2))
            return 0
        lines = zk_topics.describe(zk, args.name)
    for line in lines:
        print(line)
    return 0


def run_place(args: argparse.Namespace) -> int:
    strangers = sorted(set(args.racks) - set(args.brokers))
    if strangers:
        raise UsageError(f"--racks names broker {strangers[0]}, which is not in --brokers")
    brokers = replica_placement.broker_metadatas(
        [BrokerMetadata(b, args.racks.get(b)) for b in args.brokers], _mode(args))
    rng = random.Random(args.seed) if args.seed is not None else None
    assignment = replica_placement.assign_replicas_to_brokers(
        brokers, args.partitions, args.replication_factor, args.start_index, args.start_partition_id, rng)
    if args.json:
        print(json.dumps({"assignment": {str(p): r for p, r in sorted(assignment.items())}}))
        return 0
    for line in placement_text(brokers, assignment, args.start_index, args.seed):
        print(line)
    return 0


def placement_text(brokers: list[BrokerMetadata], assignment: replica_placement.Assignment, start_index: int,
                   seed: int | None) -> list[str]:
    """The placement for a reader learning the rules: the broker order the walk follows, how it started, each
    partition's replicas, and how evenly leadership and replicas fell on the brokers."""
    racks = {b.id: b.rack for b in brokers if b.rack is not None}
    if racks:
        order = replica_placement.rack_alternated_brokers(racks)
        walk = f"brokers walked in rack-alternated order: {', '.join(f'{b} ({racks[b]})' for b in order)}"
    else:
        walk = f"brokers walked in id order: {', '.join(str(b.id) for b in brokers)}"
    if start_index >= 0:
        start = f"start index and first shift fixed at {start_index}"
    elif seed is not None:
        start = f"start index and first shift drawn at random from seed {seed}"
    else:
        start = "start index and first shift drawn at random (give --seed or --start-index to repeat it)"
    lines = [walk, start, "", "partition  replicas (first: the preferred leader)"]
    lines += [f"{p:>9}  {','.join(map(str, replicas))}" for p, replicas in sorted(assignment.items())]
    counts = replica_placement.leader_counts(assignment)
    lines += ["", "broker  rack        leads  replicas"]
    for broker in brokers:
        leads, held = counts.get(broker.id, (0, 0))
        lines.append(f"{broker.id:>6}  {broker.rack or '-':<10}  {leads:>5}  {held:>8}")
    return lines

"""``zkconsumer assign``: run one strategy on a scenario and print who gets which partitions.

Output is one JSON object, ``{"assignment": {owner: [[topic, partition], ...]}}``, owners being thread ids
for the legacy strategies and member ids for the modern ones, every owner present and every list sorted,
so that it diffs cleanly and scripts can consume it.
"""

from __future__ import annotations

import argparse
import json

from zkconsumer.assignors import NAMES, create
from zkconsumer.assignors.legacy_roundrobin import HASH_FORMATS
from zkconsumer.assignors.registry import StrategyOptions
from zkconsumer.assignors.scenario import Scenario, parse_scenario
from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.input_file import read_text
from zkconsumer.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "assign",
        help=COMMANDS["assign"],
        description="Assign the partitions of a JSON scenario (stdin or --input) with one strategy: "
        + ", ".join(NAMES) + ".",
    )
    add_scenario_arguments(parser)
    parser.add_argument("--strategy", metavar="NAME", help="overrides the scenario's \"strategy\"")
    options.add_json(parser, help="print JSON (the only output; accepted so that every data command takes --json)")
    parser.set_defaults(handler=run)


def add_scenario_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", metavar="FILE", help="the scenario file ('-' or none: stdin)")
    parser.add_argument(
        "--roundrobin-hash", choices=HASH_FORMATS, default=None,
        help="legacy-roundrobin: hash \"[topic,partition]\" as Kafka 0.8-0.11 (bracket, default) "
        "or \"topic-partition\" as 1.x (dash); overrides the scenario's \"roundrobin_hash\"",
    )


def load_scenario(args: argparse.Namespace) -> Scenario:
    """Read and validate the scenario; the command-line hash format wins over the scenario's."""
    scenario = parse_scenario(read_text(args.input))
    if args.roundrobin_hash:
        scenario = Scenario(scenario.strategy, scenario.request, StrategyOptions(roundrobin_hash=args.roundrobin_hash))
    return scenario


def run(args: argparse.Namespace) -> int:
    scenario = load_scenario(args)
    name = args.strategy or scenario.strategy
    if not name:
        raise UsageError('no strategy: give --strategy or a "strategy" key in the scenario')
    result = create(name, scenario.options).assign(scenario.request)
    assignment = {
        owner: [[tp.topic, tp.partition] for tp in sorted(partitions)]
        for owner, partitions in result.assignment.items()
    }
    print(json.dumps({"assignment": assignment}))
    return 0

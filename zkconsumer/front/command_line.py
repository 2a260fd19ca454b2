"""The front's options and its foreground run, shared by ``zkconsumer front`` and ``python -m zkconsumer.front`` (what
the launcher starts)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path

from zkconsumer.errors import EnvironmentSetupError, UsageError
from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.groups.consumer_group import MIGRATION_POLICIES, ConsumerGroupConfig, ConsumerGroupCoordinator
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.groups.group_records import GROUPS_TOPIC
from zkconsumer.front.legacy.legacy_versions import old_versions
from zkconsumer.front.proxy.config import CLASSIC_SETTINGS, CONSUMER_SETTINGS, LOOPBACK, FrontConfig
from zkconsumer.front.proxy.config_apis import ConfigApis
from zkconsumer.front.proxy.group_apis import GroupApis
from zkconsumer.front.proxy.group_store import GroupStore, load_groups
from zkconsumer.front.proxy.handlers import LocalApis, local_table
from zkconsumer.front.proxy.server import FrontServer
from zkconsumer.front.proxy.topic_holds import TopicHolds


def add_front_options(parser: argparse.ArgumentParser) -> None:
    """Every option but the broker's address, which each command resolves its own way."""
    parser.add_argument("--host", default=LOOPBACK, help="the address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: a free one, printed)")
    parser.add_argument("--advertised-host", default=None, metavar="HOST",
                        help="the host clients are told to connect to (default: --host)")
    parser.add_argument("--advertised-port", type=int, default=None, metavar="PORT",
                        help="the port clients are told to connect to (default: the port listened on)")
    parser.add_argument("--connect-timeout-ms", type=int, default=10_000, metavar="MS",
                        help="how long connecting to the broker may take (default: %(default)s)")
    parser.add_argument("--zookeeper", default=None, metavar="CONNECT",
                        help="the ZooKeeper where OffsetCommit and OffsetFetch v0 keep offsets, at /consumers/<group>/"
                             "offsets, as Kafka 0.8.2-0.10 kept them (default: none; those versions are not answered)")
    parser.add_argument("--port-file", default=None, metavar="PATH",
                        help="write the port listened on to PATH once listening (for a launcher)")
    groups = parser.add_argument_group("group coordinator", "the front's own coordinators, with Kafka's defaults")
    groups.add_argument("--group-coordinator", choices=("front", "broker"), default="front",
                        help="who answers the group APIs: the front's coordinators, or the broker's own, relayed "
                             "(default: %(default)s)")
    groups.add_argument("--offsets-commit-timeout-ms", type=int, default=5000, metavar="MS",
                        help="offsets.commit.timeout.ms: how long the broker may take to store a checked commit "
                             "before it is answered COORDINATOR_NOT_AVAILABLE (default: %(default)s)")
    groups.add_argument("--group-store-topic", default=GROUPS_TOPIC, metavar="TOPIC",
                        help="the broker's topic where the coordinators keep their groups, replayed when the front "
                             "starts ('' keeps them in memory only; default: %(default)s)")
    for setting, default in _defaults().items():
        kip848 = "KIP-848; " if setting.startswith("group.consumer.") else ""
        groups.add_argument(_option(setting), type=int, default=default, metavar="MS",
                            help=f"{setting} ({kip848}default: %(default)s)")
    groups.add_argument("--group-consumer-assignors", default="uniform,range", metavar="NAMES",
                        help="group.consumer.assignors, the first the default (KIP-848; default: %(default)s)")
    groups.add_argument("--group-consumer-migration-policy", choices=MIGRATION_POLICIES, default="bidirectional",
                        help="group.consumer.migration.policy: which online conversions between classic and consumer "
                             "groups happen (KIP-848; default: %(default)s)")


def _option(setting: str) -> str:
    return "--" + setting.replace(".", "-")


def _defaults() -> dict[str, int]:
    """Each setting's default: the coordinators' configs', which are Kafka's."""
    classic, consumer = ClassicGroupConfig(), ConsumerGroupConfig()
    return {**{setting: getattr(classic, name) for setting, name in CLASSIC_SETTINGS.items()},
            **{setting: getattr(consumer, name) for setting, name in CONSUMER_SETTINGS.items()}}


def _given(args: argparse.Namespace, settings: dict[str, str]) -> dict[str, int]:
    return {name: getattr(args, _option(setting)[2:].replace("-", "_")) for setting, name in settings.items()}


def config_of(args: argparse.Namespace, bootstrap: str) -> FrontConfig:
    """:raises UsageError: a group setting out of bounds."""
    try:
        classic = ClassicGroupConfig(**_given(args, CLASSIC_SETTINGS))
        consumer = ConsumerGroupConfig(
            assignors=tuple(n.strip() for n in args.group_consumer_assignors.split(",") if n.strip()),
            migration_policy=args.group_consumer_migration_policy,
            **_given(args, CONSUMER_SETTINGS)).check()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return FrontConfig.of(bootstrap, host=args.host, port=args.port, advertised_host=args.advertised_host,
                          advertised_port=args.advertised_port, connect_timeout=max(args.connect_timeout_ms, 1) / 1000,
                          group_coordinator=args.group_coordinator == "front", classic_groups=classic,
                          consumer_groups=consumer, zookeeper=args.zookeeper,
                          group_store_topic=args.group_store_topic or None,
                          offsets_commit_timeout_ms=max(args.offsets_commit_timeout_ms, 1))


def group_coordinator_apis(config: FrontConfig,
                           holds: TopicHolds | None = None) -> tuple[LocalApis, CoordinatorRuntime | None]:
    """The APIs the front answers, by its config: the configs APIs (:mod:`.config_apis`) and its coordinators' group
    APIs (and their runtime), unless the broker's own coordinator answers those. ``holds``: the topics shown smaller,
    in the KIP-848 coordinator's view of them as in Metadata."""
    holds = holds or TopicHolds()
    configs = ConfigApis(config, holds).table()
    if not config.group_coordinator:
        return local_table(configs), None
    store = GroupStore(config, config.group_store_topic) if config.group_store_topic else None
    runtime = CoordinatorRuntime(ClassicGroupCoordinator(config.classic_groups),
                                 ConsumerGroupCoordinator(config.consumer_groups), store=store)
    apis = GroupApis(runtime, holds=holds, commit_timeout_s=config.offsets_commit_timeout_ms / 1000)
    return local_table([*apis.table(), *configs]), runtime


def run_front(config: FrontConfig, port_file: str | None = None, local: LocalApis | None = None,
              announce: bool = False) -> int:
    """Serve until SIGINT or SIGTERM. ``announce`` prints where the front listens, for a person at a terminal.
    ``local`` replaces the group coordinators the config names.

    :raises EnvironmentSetupError: the port cannot be listened on.
    """
    return asyncio.run(_serve(config, port_file, local, announce))


async def _serve(config: FrontConfig, port_file: str | None, local: LocalApis | None, announce: bool) -> int:
    runtime = None
    holds = TopicHolds(hidden=frozenset({config.group_store_topic} if config.group_store_topic else ()))
    if local is None:
        local, runtime = group_coordinator_apis(config, holds)
    server = FrontServer(config, local, holds, old_versions(config, local))
    store = runtime.store if runtime is not None and isinstance(runtime.store, GroupStore) else None

    async def load(bound: FrontServer) -> None:  # the groups coordinated at this address, before anyone is answered
        if runtime is not None and store is not None:
            await load_groups(runtime, store, bound.advertised.address)

    try:
        await server.start(load)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise EnvironmentSetupError(f"cannot listen on {config.host}:{config.port}: {reason}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if port_file:
        _write_atomically(Path(port_file), f"{server.port}\n")
    if announce:
        print(f"front listening on {config.host}:{server.port} (clients told {server.advertised.address}), "
              f"relaying to {','.join(config.bootstrap)}; Ctrl-C stops it", flush=True)
    try:
        await stop.wait()  # no timeout: the front serves until SIGINT or SIGTERM, whose handlers set it
    finally:
        await server.close()
        if runtime is not None:
            await runtime.aclose()
            if isinstance(runtime.store, GroupStore):
                await runtime.store.close()
    return 0


def _write_atomically(path: Path, text: str) -> None:
    """A reader polling for ``path`` sees it whole or not at all."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(text, encoding="ascii")
    temporary.replace(path)

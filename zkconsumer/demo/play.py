"""Where and how ``zkconsumer demo`` plays a scenario, once its command line is read: the legacy members narrated
step by step (:func:`play_legacy`), or every protocol's members side by side on the comparison's clock
(:func:`play_protocols`), on the servers named on the command line or on the embedded environment, which stays up
for the commands the demo prints at its end (:mod:`zkconsumer.embedded.servers` provides either).

Each plays inside the classroom's observers (``--step``, ``--serve``: :mod:`.classroom`), writes the run's files and
returns what the command prints at the end; the command line (:mod:`zkconsumer.cli.demo`) parses, maps its options to
the dataclasses these take, calls one of them and prints.
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from zkconsumer.demo.classroom import ClassroomOptions, classroom
from zkconsumer.demo.falling_behind import FallingBehind
from zkconsumer.demo.front_log_follower import FrontLogFollower
from zkconsumer.demo.protocols_narration import ProtocolsNarrator
from zkconsumer.demo.rebalance_demo import CHROOT, DemoResult, DemoSettings, play_against, play_in_own_chroot
from zkconsumer.embedded.servers import ServerOptions, provide_servers
from zkconsumer.migration.comparison import identified, on_servers, server_options, written
from zkconsumer.migration.run import CompareSettings, ProtocolRun, compare_protocols
from zkconsumer.migration.scenes import Protocol


def play_legacy(servers: ServerOptions, in_class: ClassroomOptions, settings: DemoSettings,
                out: TextIO = sys.stdout) -> DemoResult:
    """The legacy members narrated step by step. On the embedded environment (started if needed, left running): in
    the demo's own ZooKeeper chroot, with a bridge of its own. On servers named: as they are, in a topic and group of
    the demo's own."""
    with (classroom(in_class, title=f"zkconsumer demo: group {settings.group}") as room,  # --step, --serve
          provide_servers(replace(servers, leave_running=True)) as provided):
        if provided.environment is not None:
            print(provided.describe(), file=out)
            root, bootstrap = provided.zookeeper, provided.bootstrap
            behind = FallingBehind(root.rstrip("/") + CHROOT, bootstrap, settings.group, out)
            result = play_in_own_chroot(root, bootstrap, settings, observers=(*room.observers, behind))
        else:
            behind = FallingBehind(provided.zookeeper, provided.bootstrap, settings.group, out)
            result = play_against(provided.zookeeper, provided.bootstrap, settings,
                                  observers=(*room.observers, behind))
        room.finish(result.timeline_path)
    return result


@dataclass(frozen=True)
class ProtocolsPlayed:
    """What :func:`play_protocols` ran: each protocol's run, the page of every protocol's lanes, and whether the
    embedded environment's servers were used (they stay up)."""

    runs: tuple[ProtocolRun, ...]
    page: Path
    embedded: bool

    @property
    def failed(self) -> bool:
        return any(run.error for run in self.runs)


def play_protocols(servers: ServerOptions, in_class: ClassroomOptions, settings: DemoSettings,
                   protocols: tuple[Protocol, ...], out: TextIO = sys.stdout) -> ProtocolsPlayed:
    """The scenario played by each protocol's members at once, on the comparison's clock, narrated as it goes;
    the comparison's page (every protocol's lanes on one time axis, the coordinator's above each modern group's)
    and each protocol's events in a directory of this run's own under ``--output-dir``. On the servers the
    comparison would play on (:func:`~zkconsumer.migration.comparison.server_options`): those named, or the embedded
    environment's (left running), its groups at a front of the run's own."""
    # 1. the comparison's settings, from the demo's
    scenario = settings.scenario
    out_dir = settings.output_dir / f"run-{time.strftime('%Y%m%d-%H%M%S')}"
    compare = CompareSettings("", "", protocols, out_dir, partitions=settings.partitions,
                              rate=scenario.production.rate, pace=max(settings.pace, 1.0),
                              session_timeout_ms=settings.session_timeout_ms, scenario=scenario,
                              prefix=scenario.topic.name)
    # a move's members are legacy ones until its cutover, whatever the protocol (the narrator follows the cutover)
    narrator = ProtocolsNarrator(out, legacy={p.name for p in protocols if p.family == "legacy" or scenario.moves})
    with contextlib.ExitStack() as stack:  # the run's own front stops whatever ends the play, wherever
        # 2. the servers, as the comparison's
        provided = stack.enter_context(provide_servers(replace(server_options(servers, compare), leave_running=True)))
        compare = on_servers(compare, provided)
        if provided.environment is not None:
            print(provided.describe(), file=out)
        out_dir.mkdir(parents=True, exist_ok=True)
        # who coordinates the modern groups, and what it refuses, as the server says
        compare = identified(compare, False, lambda line: print(line, file=out), software=provided.broker_software)
        if compare.identity is not None and any(p.family == "modern" for p in protocols):
            print(f"modern groups at {compare.identity.name}", file=out)
        print(f"Scenario {scenario.name!r}: {scenario.title}; protocols {', '.join(p.name for p in protocols)}, "
              f"{compare.partitions} partitions, {compare.rate:g} messages a second to each, session timeout "
              f"{compare.session_timeout_ms} ms", file=out)
        # 3. the play, narrated, the front's coordinator rounds as they happen; then the page
        legacy_groups = tuple(compare.name(p) for p in protocols if p.family == "legacy")
        with classroom(in_class, title=f"zkconsumer demo: scenario {scenario.name}",  # --step, --serve
                       legacy=lambda consumer_id: consumer_id.startswith(legacy_groups)) as room:
            narrator.observers = room.observers
            follower = None
            if provided.front_log is not None:
                narrator.groups = {compare.name(p): p.name for p in protocols if p.family == "modern"}
                follower = FrontLogFollower(provided.front_log, narrator.coordinator_event, interval=0.05,
                                            caught_up=narrator.caught_up).start()
            try:
                runs = compare_protocols(compare, observer=narrator)
            finally:
                if follower is not None:
                    follower.stop()
                stack.close()  # the front, before the page is written
            _, _, page = written(compare, runs, f"demo of scenario {scenario.name!r}, run {compare.run_id}")
            room.finish(page)
    return ProtocolsPlayed(tuple(runs), page, embedded=provided.environment is not None)

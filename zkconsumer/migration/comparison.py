"""The comparison as one call, which ``zkconsumer migration compare`` and the pytest plugin (:mod:`zkconsumer.testing`)
both make: :func:`plan` turns what was asked into settings, refusing bad input in one line before anything starts;
:func:`compare` provides the servers, plays the script for every protocol (:mod:`zkconsumer.migration.run`), writes
the report and returns a :class:`Comparison` with each protocol's typed outcome
(:mod:`zkconsumer.migration.outcome`).

Servers (:class:`Servers`): without a ZooKeeper, the embedded environment, started for the run and stopped after it
(one already running is used and left running); its modern groups bootstrap from a front the run starts before the
environment's broker (:func:`run_front`: its KIP-848 groups get the classic members' session), unless the
coordinator asked for is the broker's own. With a ZooKeeper and a ``broker``, the run puts its own front before that
broker the same way (the plugin's session servers). With a ZooKeeper and a ``bootstrap`` (or the brokers registered
in it), those are used as they are, and ``coordinator`` says whose coordinator that is (default: the broker's).

Notes the run has for the person who started it (a protocol left out, where it runs) go to ``say``, a line each.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from zkconsumer.errors import UsageError
from zkconsumer.members.application import FAILED_EVENT, Application, check
from zkconsumer.migration.outcome import ComparisonResult, ProtocolOutcome, outcome
from zkconsumer.migration.report import ProtocolResult, problems, write_report
from zkconsumer.migration.run import (
    MAX_TOTAL_RATE,
    CompareSettings,
    ProtocolRun,
    collect,
    compare_protocols,
    member_settings,
    read_deliveries,
    state_dir,
)
from zkconsumer.migration.scenes import (
    DEFAULT_SCENARIO,
    KIP848_PROTOCOLS,
    KNOWN,
    Protocol,
    Scene,
    check_playable,
    legacy_only,
    parse_protocols,
)
from zkconsumer.scenarios.model import MAX_REVOKE_MS, Scenario
from zkconsumer.scenarios.parse import load

if TYPE_CHECKING:
    from zkconsumer.embedded.front_process import FrontProcess

MAX_PARTITIONS = 64  # the page draws a row per partition and per protocol
COORDINATORS = ("front", "broker")
#: how the protocols' timeouts are set: ``same`` (one set for all, the comparison's) or ``stock`` (each protocol's
#: defaults; issue 39)
SETTINGS_MODES = ("same", "stock")
PREFIX = "zkconsumer migration: "  # of the notes the runner says


@dataclass(frozen=True)
class Servers:
    """Where a comparison runs (see the module's docstring)."""

    zookeeper: str | None = None  # None: the embedded environment
    bootstrap: str | None = None  # with ``zookeeper``: used as it is (None: the brokers registered in ZooKeeper)
    broker: str | None = None  # with ``zookeeper``: a broker the run puts its own front before
    coordinator: str | None = None  # front or broker; None: the front where the run starts one, else the broker's
    run_dir: Path | None = None  # the embedded environment's run directory


@dataclass(frozen=True)
class Comparison:
    """What a comparison played and wrote: its settings, each protocol's measured result (for the report), the
    typed outcome a test asserts on, the report's files, what went wrong, and where it ran."""

    settings: CompareSettings
    results: tuple[ProtocolResult, ...]
    result: ComparisonResult
    problems: tuple[str, ...]
    where: str

    @property
    def report_json(self) -> Path:
        return self.result.report

    @property
    def report_html(self) -> Path:
        return self.result.page


def scenario_of(scenario: str | Scenario | None) -> Scenario:
    """A shipped scenario's name, a TOML file's path, or a :class:`~zkconsumer.scenarios.model.Scenario` built in
    Python; the default scenario for None."""
    return scenario if isinstance(scenario, Scenario) else load(scenario or DEFAULT_SCENARIO)


def plan(output_dir: Path, *, scenario: str | Scenario | None = None, protocols: str | Sequence[str] | None = None,
         partitions: int | None = None, rate: float | None = None, pace: float = 2.0, revoke_ms: int | None = None,
         app: Application | None = None, settings: str = "same",
         say: Callable[[str], None] = lambda _line: None) -> CompareSettings:
    """The settings of a comparison; every refusal (a :class:`UsageError` of one line) before anything starts:
    an unknown protocol, a scenario that does not parse or that a protocol cannot play, an application that cannot
    be imported, figures out of range, an output directory that is not new or empty. Without ``protocols``, every
    protocol that can play the scenario."""
    if settings not in SETTINGS_MODES:
        raise UsageError(f"settings {settings!r}: expected one of {', '.join(SETTINGS_MODES)}")
    if settings == "stock":
        raise UsageError("settings 'stock' (each protocol at its own stock timeouts) is not played yet (issue 39); "
                         "use settings='same'")
    names = protocols if isinstance(protocols, str) or protocols is None else ",".join(protocols)
    chosen = parse_protocols(names or ",".join(KNOWN))
    played = scenario_of(scenario)
    partitions = played.topic.partitions if partitions is None else partitions
    rate = played.production.rate if rate is None else rate
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise UsageError(f"--partitions must be between 1 and {MAX_PARTITIONS}")
    if partitions + played.grown > MAX_PARTITIONS:
        raise UsageError(f"{played.source} grows the topic by {played.grown}: --partitions {partitions} would "
                         f"end above {MAX_PARTITIONS}")
    if names is None:  # every protocol by default: those that cannot play the scenario are left out
        chosen = without_unplayable(played, chosen, say)
    check_playable(played, chosen)
    if not rate > 0:
        raise UsageError("--rate must be more than 0 messages a second")
    if rate * len(chosen) > MAX_TOTAL_RATE:
        raise UsageError(f"--rate {rate:g} for {len(chosen)} protocols is {rate * len(chosen):g} "
                         f"messages a second, more than the {MAX_TOTAL_RATE} the comparison produces and counts "
                         f"reliably (every delivery report is kept)")
    if pace < 0:
        raise UsageError("--pace must not be negative")
    if revoke_ms is not None and not 0 <= revoke_ms <= MAX_REVOKE_MS:
        raise UsageError(f"--revoke-ms must be from 0 to {MAX_REVOKE_MS} ms, not {revoke_ms}")
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())):
        raise UsageError(f"--output-dir {output_dir} exists and is not an empty directory; give a new one")
    planned = CompareSettings("", "", chosen, output_dir, partitions=partitions, rate=rate, pace=pace,
                              scenario=played, revoke_ms=revoke_ms, app=None if app is None else check(app))
    if played.session_timeout_ms is not None:
        planned = replace(planned, session_timeout_ms=played.session_timeout_ms)
    return planned


def without_unplayable(scenario: Scenario, protocols: tuple[Protocol, ...],
                       say: Callable[[str], None]) -> tuple[Protocol, ...]:
    """The default protocols for a scenario only legacy members can play here (it grows the topic, expires a session
    or sets members' settings): the legacy ones, with one line saying which were left out and why (named in
    ``--protocols``, a modern one is refused instead)."""
    if not legacy_only(scenario):
        return protocols
    kept = tuple(p for p in protocols if p.family == "legacy")
    left = [p.name for p in protocols if p.family != "legacy"]
    say(f"{PREFIX}{', '.join(left)} left out: {scenario.source} grows the topic, expires a session or sets members' "
        f"settings, which only the legacy groups can play here (name them in --protocols to see why)")
    return kept


def compare(settings: CompareSettings, servers: Servers, *, default_protocols: bool = False,
            on_scene: Callable[[str, Scene, bool, float], None] | None = None,
            say: Callable[[str], None] = lambda _line: None) -> Comparison:
    """Provide the servers, play every protocol, write the report; the servers and everything the run made are
    gone when it returns or raises (an embedded environment that was already running is left running)."""
    if servers.zookeeper is not None:
        if servers.broker is not None:
            with fronted(servers.broker, settings) as front:
                fronted_settings = replace(settings, zookeeper=servers.zookeeper, bootstrap=front.address,
                                           coordinator_events=front.log_path, coordinator="front")
                return _played(fronted_settings, f"broker {servers.broker} through the run's front at {front.address}",
                               on_scene)
        bootstrap = servers.bootstrap or registered_broker(servers.zookeeper)
        given = replace(settings, zookeeper=servers.zookeeper, bootstrap=bootstrap,
                        coordinator=servers.coordinator or "broker")
        return _played(without_kip848_at_broker(given, default_protocols, say), f"broker {bootstrap}", on_scene)
    from zkconsumer.embedded.environment import LocalEnvironment
    from zkconsumer.embedded.front import front_coordinates_groups

    env = LocalEnvironment(servers.run_dir)
    started = env.endpoints() is None
    endpoints = env.up()
    own_front = None
    try:
        broker = endpoints.get("broker", endpoints["bootstrap_servers"])
        front_log = env.front_log() if servers.coordinator != "broker" else None
        if front_log is None:  # the broker itself: asked for, or an environment started with --direct-broker
            settings = replace(settings, bootstrap=broker, coordinator="broker")
        elif front_coordinates_groups(front_log):
            own_front = run_front(broker, settings)
            settings = replace(settings, bootstrap=own_front.address, coordinator_events=own_front.log_path,
                               coordinator="front")
        else:  # a front relaying the group APIs still leaves the groups to the broker's coordinator
            settings = replace(settings, bootstrap=endpoints["bootstrap_servers"], coordinator_events=front_log,
                               coordinator="broker")
        settings = without_kip848_at_broker(settings, default_protocols, say)
        address = settings.bootstrap if settings.bootstrap != broker else None
        through = "" if address is None else f" through the front at {address}"
        say(f"embedded environment: ZooKeeper {endpoints['zookeeper']}, broker {broker}{through}"
            + (" (started for this run)" if started else " (already running, left running)"))
        return _played(replace(settings, zookeeper=endpoints["zookeeper"]),
                       f"embedded environment (Tansu broker {broker}{through})", on_scene)
    finally:
        if own_front is not None:
            own_front.stop()
        if started:
            env.down()


@contextlib.contextmanager
def fronted(broker: str, settings: CompareSettings) -> Iterator[FrontProcess]:
    """:func:`run_front` for a ``with`` block: the front stops at its end."""
    front = run_front(broker, settings)
    try:
        yield front
    finally:
        front.stop()


def run_front(broker: str, settings: CompareSettings) -> FrontProcess:
    """A front of the run's own before ``broker``, its KIP-848 groups' session and heartbeat derived from the classic
    members' session (:func:`~zkconsumer.members.modern_member.consumer_group_timeouts_ms`): under KIP-848 they are
    the coordinator's settings, and Kafka's defaults (45 s) against the classic members' 4 s would make a SIGKILLed
    member's partitions wait eleven times longer for a setting, not for the protocol. Kafka sets them per group
    (``consumer.session.timeout.ms``); this front sets them for its groups, which are only this run's."""
    from zkconsumer.embedded.front_process import FrontProcess
    from zkconsumer.members.modern_member import consumer_group_timeouts_ms

    session_ms, heartbeat_ms = consumer_group_timeouts_ms(settings.session_timeout_ms)
    # the lower bounds too (Kafka's 6 s classic and 45 s / 5 s KIP-848 minimums would refuse the members' session)
    front = FrontProcess(broker, settings.output_dir / "front", options=(
        "--group-min-session-timeout-ms", str(min(settings.session_timeout_ms, 6000)),
        "--group-consumer-session-timeout-ms", str(session_ms),
        "--group-consumer-min-session-timeout-ms", str(session_ms),
        "--group-consumer-heartbeat-interval-ms", str(heartbeat_ms),
        "--group-consumer-min-heartbeat-interval-ms", str(heartbeat_ms)))
    return front.start()


def without_kip848_at_broker(settings: CompareSettings, default_protocols: bool,
                             say: Callable[[str], None]) -> CompareSettings:
    """The default protocols at the broker's own coordinator, which does not run KIP-848: its protocols left out, in
    one line (named with ``--protocols``, they are tried, and their run stops at the first scene, saying why)."""
    if not default_protocols or settings.coordinator != "broker":
        return settings
    kept = tuple(p for p in settings.protocols if p.group_protocol != "consumer")
    if len(kept) < len(settings.protocols):
        say(f"{PREFIX}{', '.join(KIP848_PROTOCOLS)} left out: the broker's own group coordinator does not run KIP-848 "
            f"(name them in --protocols to try)")
    return replace(settings, protocols=kept)


def registered_broker(connect: str) -> str:
    """The bootstrap of the brokers registered in ZooKeeper at ``connect``; one line when there is none."""
    from zkconsumer.tools.offset_checker import registered_bootstrap
    from zkconsumer.zk.client import zookeeper

    with zookeeper(connect, quiet=True) as zk:
        bootstrap = registered_bootstrap(zk)
    if bootstrap is None:
        raise UsageError(f"no broker is registered in ZooKeeper at {connect}; give --bootstrap-server")
    return bootstrap


def _played(settings: CompareSettings, where: str,
            on_scene: Callable[[str, Scene, bool, float], None] | None) -> Comparison:
    """Play the script on servers already there, measure, write the report."""
    settings.output_dir.mkdir(parents=True, exist_ok=True)
    runs = compare_protocols(settings, on_scene=on_scene)
    results = collect(runs, settings.output_dir)
    meta = (f"run {settings.run_id} of scenario {settings.scenario.name!r} on the {where}: {settings.partitions} "
            f"partitions per topic (at the start), "
            f"{settings.rate:g} messages a second to each, {settings.pace:g} s of steady production after each "
            f"scene (the scenes begin together for every protocol), member session timeout "
            f"{settings.session_timeout_ms} ms, the members' revoke cost {settings.revoke_costs()}, modern groups at "
            + ("the broker's own group coordinator" if settings.coordinator == "broker"
               else f"the {settings.coordinator}'s group coordinator")
            + ("" if settings.app is None else f", the application {settings.app.handle}"))
    json_path, html_path = write_report(settings.output_dir, results, {
        "run_id": settings.run_id, "partitions": settings.partitions, "rate": settings.rate,
        "pace": settings.pace, "session_timeout_ms": settings.session_timeout_ms,
        "coordinator": settings.coordinator, "scenario": settings.scenario.name,
        "revoke_ms": {m.name: settings.member_revoke_ms(m.name) for m in settings.scenario.members}},
        meta, member_settings(settings))
    outcomes = {run.protocol.name: _outcome(run, result) for run, result in zip(runs, results, strict=True)}
    return Comparison(settings, tuple(results), ComparisonResult(outcomes, json_path, html_path),
                      tuple(problems(results)), where)


def _outcome(run: ProtocolRun, result: ProtocolResult) -> ProtocolOutcome:
    events = []
    if run.events_path.exists():
        with open(run.events_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if FAILED_EVENT in line:
                    try:
                        events.append(json.loads(line))
                    except ValueError:
                        continue
    m = result.measures
    return outcome(run.protocol.name, m.total, run.produced, read_deliveries(run), events, m.failures, run.error,
                   run.events_path, state_dir(run))

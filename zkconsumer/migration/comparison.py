"""The comparison as one call, which ``zkconsumer migration compare`` and the pytest plugin (:mod:`zkconsumer.testing`)
both make: :func:`plan` turns what was asked into settings, refusing bad input in one line before anything starts;
:func:`compare` provides the servers, plays the script for every protocol (:mod:`zkconsumer.migration.run`), writes
the report and returns a :class:`Comparison` with each protocol's typed outcome
(:mod:`zkconsumer.migration.outcome`).

Servers (:mod:`zkconsumer.embedded.servers`, from a :class:`~zkconsumer.embedded.servers.ServerOptions`): without a
ZooKeeper, the embedded environment, started for the run and stopped after it (one already there is used and left
running); its modern groups bootstrap from a front the run starts before the environment's broker
(:func:`server_options`: with ``--settings same`` its KIP-848 groups get the classic members' session), unless the
coordinator asked for is the broker's own. With a ZooKeeper and a broker given to be fronted, the run puts its own
front before that broker the same way (the plugin's session servers). With a ZooKeeper and a broker (or the brokers
registered in it), those are used as they are. Whichever it is, the server the modern groups bootstrap from is asked
who coordinates them and with what settings (:func:`identified`), and the report states that, not an assumption;
``coordinator``, where given, must be what the server says it is.

Notes the run has for the person who started it (a protocol left out, where it runs) go to ``say``, a line each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zkconsumer.embedded.servers import ServerOptions, Servers, provide_servers
from zkconsumer.errors import UsageError
from zkconsumer.members.application import FAILED_EVENT, Application, check
from zkconsumer.members.command_member import CommandMember
from zkconsumer.migration.messages import Messages, MessageSource
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
    modern_only,
    parse_protocols,
)
from zkconsumer.migration.timeouts import SAME, SETTINGS_MODES, outside_bounds, session_scenes, too_short
from zkconsumer.scenarios.model import (
    CUTOVER,
    CUTOVER_OFFSETS_SAID,
    DUAL_COMMIT,
    MAX_REVOKE_MS,
    MOVE_LEGACY_STRATEGY,
    RESTART,
    UPGRADE,
    Scenario,
)
from zkconsumer.scenarios.parse import load

if TYPE_CHECKING:
    from zkconsumer.embedded.broker_software import BrokerSoftware
    from zkconsumer.kafka.coordinator_identity import CoordinatorIdentity

MAX_PARTITIONS = 64  # the page draws a row per partition and per protocol
COORDINATORS = ("front", "broker")
PREFIX = "zkconsumer migration: "  # of the notes the runner says
KAFKA_MIN_SESSION_MS = 6000  # Kafka's group.min.session.timeout.ms, the front's default


@dataclass(frozen=True)
class Comparison:
    """What a comparison played and wrote: its settings, the typed outcome a test asserts on, the report's files
    and what went wrong."""

    settings: CompareSettings
    result: ComparisonResult
    problems: tuple[str, ...]

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
         app: Application | None = None, settings: str = "same", member: str | Sequence[str] | None = None,
         messages: Messages | None = None, fetch_after_revoke_ms: int = 0,
         say: Callable[[str], None] = lambda _line: None) -> CompareSettings:
    """The settings of a comparison; every refusal (a :class:`UsageError` of one line) before anything starts:
    an unknown protocol, a scenario that does not parse or that a protocol cannot play, an application that cannot
    be imported, figures out of range, an output directory that is not new or empty, a ``member`` command with no
    modern protocol to run it, a first message of the team's ``messages`` that is not one
    (:mod:`zkconsumer.migration.messages`), the fault ``fetch_after_revoke_ms`` asked of a legacy member. Without
    ``protocols``, every protocol that can play the scenario. ``member``: a command line (or its words) run as every
    member of the modern protocols (:mod:`zkconsumer.members.command_member`)."""
    if settings not in SETTINGS_MODES:
        raise UsageError(f"--settings {settings!r}: expected one of {', '.join(SETTINGS_MODES)}")
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
    command = None if member is None else CommandMember.of(member)
    if command is not None and not any(p.family == "modern" for p in chosen):
        raise UsageError(f"--member-command {command}: it runs as the members of the modern protocols, and "
                         f"{', '.join(p.name for p in chosen)} are all legacy")
    if fetch_after_revoke_ms < 0 or (fetch_after_revoke_ms and any(p.family == "legacy" for p in chosen)):
        raise UsageError("fetch_after_revoke_ms: a modern member's fault, from 0 ms; play it with modern protocols")
    source = None if messages is None else MessageSource(messages)
    if source is not None:
        source.check()
    planned = CompareSettings("", "", chosen, output_dir, partitions=partitions, rate=rate, pace=pace,
                              scenario=played, revoke_ms=revoke_ms, app=None if app is None else check(app),
                              settings_mode=settings, member=command, messages=source,
                              fetch_after_revoke_ms=fetch_after_revoke_ms)
    if played.session_timeout_ms is not None:
        planned = replace(planned, session_timeout_ms=played.session_timeout_ms)
    return planned


def without_unplayable(scenario: Scenario, protocols: tuple[Protocol, ...],
                       say: Callable[[str], None]) -> tuple[Protocol, ...]:
    """The default protocols for a scenario only legacy members can play (it expires a session or sets members'
    settings): the legacy ones; for one only modern protocols can play (it upgrades a member to KIP-848 in place,
    or plays the move from ZooKeeper): the modern ones; with one line saying which were left out and why (named in
    ``--protocols``, one is refused instead)."""
    if modern_only(scenario):
        kept = tuple(p for p in protocols if p.family == "modern")
        left = [p.name for p in protocols if p.family != "modern"]
        if left:
            does = ("plays the move from ZooKeeper, whose target is a broker-side group" if scenario.moves else
                    "upgrades members to KIP-848 in place, which a ZooKeeper group cannot do")
            say(f"{PREFIX}{', '.join(left)} left out: {scenario.source} {does} (name them in --protocols to see why)")
        return kept
    if not legacy_only(scenario):
        return protocols
    kept = tuple(p for p in protocols if p.family == "legacy")
    left = [p.name for p in protocols if p.family != "legacy"]
    say(f"{PREFIX}{', '.join(left)} left out: {scenario.source} expires a session or sets members' settings, which "
        f"only the legacy groups can play (name them in --protocols to see why)")
    return kept


def compare(settings: CompareSettings, servers: ServerOptions, *, coordinator: str | None = None,
            default_protocols: bool = False, on_scene: Callable[[str, Scene, bool, float], None] | None = None,
            say: Callable[[str], None] = lambda _line: None) -> Comparison:
    """Provide the servers (:func:`server_options`), play every protocol, write the report; the servers and everything
    the run made are gone when it returns or raises (an embedded environment that was already running is left
    running). ``coordinator``, where given, is whose group coordinator the modern groups get (``front`` or
    ``broker``), and what the server they bootstrap from must say it is."""
    with provide_servers(server_options(servers, settings, coordinator)) as provided:
        settings = identified(on_servers(settings, provided, coordinator), default_protocols, say, asked=coordinator,
                              software=provided.broker_software)
        check_restarts(settings)
        if provided.environment is not None:  # as the run uses them: the broker itself, where its own is asked for
            say(replace(provided, bootstrap=settings.bootstrap).describe())
        if settings.identity is not None and any(p.family == "modern" for p in settings.protocols):
            say(f"modern groups at {settings.identity.name}")
        return _played(settings, _where(provided, settings.bootstrap), on_scene)


def check_restarts(settings: CompareSettings) -> None:
    """Refuse, before anything plays, a scenario's ``restart`` of a server the run cannot restart (one given by
    address), in one line."""
    for scene in settings.scenario.scenes:
        for j, action in enumerate(scene.actions, 1):
            if action.kind != RESTART:
                continue
            refused = ("nothing can be restarted here" if settings.restarts is None
                       else settings.restarts.refusal(action.server))
            if refused is not None:
                raise UsageError(f"{settings.scenario.source}: scene {scene.number}, action {j}: restart: {refused}")


def server_options(servers: ServerOptions, settings: CompareSettings, coordinator: str | None = None) -> ServerOptions:
    """The options a comparison's servers are provided with (as ``demo --protocol``'s): the run's own front, its
    files in the output directory and its groups' settings :func:`front_settings`; on the embedded environment
    unless the broker's own coordinator is asked for, before given servers only where the caller asks for it (the
    pytest plugin, for the session's broker)."""
    front = servers.front if servers.zookeeper is not None else coordinator != "broker"
    return replace(servers, front=front, front_options=front_settings(settings), workdir=settings.output_dir)


def on_servers(settings: CompareSettings, servers: Servers, coordinator: str | None = None) -> CompareSettings:
    """``settings`` on the servers provided: the modern groups at what clients are given (the broker itself, where its
    own coordinator is asked for) and the run's front's events in their timelines; the producer at the broker itself
    (a front holding a topic smaller refuses a produce to a partition it does not show yet)."""
    direct = coordinator == "broker"
    return replace(settings, zookeeper=servers.zookeeper, bootstrap=servers.broker if direct else servers.bootstrap,
                   coordinator_events=None if direct else servers.front_log, producer_bootstrap=servers.broker,
                   restarts=servers.restarts)


def _where(servers: Servers, bootstrap: str) -> str:
    """Where the run played, as the page says it."""
    if servers.environment is not None:
        through = "" if bootstrap == servers.broker else f" through the front at {bootstrap}"
        return f"embedded environment (broker {servers.broker}{through})"
    if bootstrap != servers.broker:
        return f"broker {servers.broker} through the run's front at {bootstrap}"
    return f"server {bootstrap}"


def identified(settings: CompareSettings, default_protocols: bool, say: Callable[[str], None],
               asked: str | None = None,
               software: Callable[[], BrokerSoftware | None] | None = None) -> CompareSettings:
    """``settings`` with the coordinator at its bootstrap server as that server says it is
    (:func:`~zkconsumer.kafka.coordinator_identity.identify`: the report states it, and each protocol's timeouts as
    they ran), named with its version where the broker's coordinator runs the groups (``software``: the provided
    servers' :meth:`~zkconsumer.embedded.servers.Servers.broker_software`), the default protocols it cannot run
    left out (:func:`without_kip848_at_broker`), the KIP-848 groups' session set on each group where a Kafka
    broker coordinates them (:func:`with_group_timeouts`), and, in one line, what it would refuse: the coordinator
    ``asked`` for (``--coordinator``) when it is another, a growth its modern groups cannot see, a session outside
    its bounds."""
    from zkconsumer.kafka.coordinator_identity import identify

    identity = identify(settings.bootstrap)
    if identity.kind == "broker" and software is not None:
        found = software()
        if found is not None:
            identity = replace(identity, broker_software=found.name, broker_software_source=found.source)
    if asked is not None and asked != identity.kind:
        raise UsageError(f"--coordinator {asked}: the server at {settings.bootstrap} is {identity.name}")
    settings = without_kip848_at_broker(replace(settings, identity=identity, coordinator=identity.kind),
                                        default_protocols, say)
    check_playable(settings.scenario, settings.protocols, modern_growth=grows_topics(identity))
    settings = with_group_timeouts(settings)
    short = too_short({p.name: settings.timeouts(p) for p in settings.protocols}, settings.protocols,
                      identity.settings)
    if short is not None:
        raise UsageError(f"{short}; give a longer session (the scenario's session_timeout_ms) or --settings stock")
    return settings


def with_group_timeouts(settings: CompareSettings) -> CompareSettings:
    """Under ``--settings same``, where a Kafka broker's own coordinator runs KIP-848 groups: their session and
    heartbeat are the group's (Kafka 4.0's group configs ``consumer.session.timeout.ms`` and
    ``consumer.heartbeat.interval.ms``, KIP-848), set by the run on each of its modern groups before any member
    starts, as the run's own front is given them (:func:`front_settings`); the broker's bounds must take them
    (``local up --broker kafka-4`` widens them as the front's are), else refused in one line. Elsewhere
    ``settings`` as they are: the front's are its options, ``stock`` runs the coordinator's own."""
    from zkconsumer.members.modern_member import consumer_group_timeouts_ms

    identity = settings.identity
    if (settings.settings_mode != SAME or identity is None or identity.kind != "broker"
            or not identity.runs_kip848 or not plays_kip848(settings)):
        return settings
    group = consumer_group_timeouts_ms(settings.session_timeout_ms)
    refused = outside_bounds(group, identity.settings)
    if refused is not None:
        raise UsageError(f"the KIP-848 groups under --settings same: {refused}; widen the broker's bounds "
                         f"(local up --broker kafka-4 does) or give --settings stock")
    return replace(settings, group_timeouts_ms=group)


def plays_kip848(settings: CompareSettings) -> bool:
    """Whether a KIP-848 group plays: a protocol of it, or a modern member an ``upgrade`` restarts with it."""
    return any(p.group_protocol == "consumer" for p in settings.protocols) or (
        settings.scenario.uses(UPGRADE) is not None and any(p.family == "modern" for p in settings.protocols))


def grows_topics(identity: CoordinatorIdentity) -> bool:
    """Whether a modern group can see a topic grow at this server: a front holds it smaller in its Metadata until
    the scene; a broker that reports Kafka's group settings is a Kafka broker, which has CreatePartitions (Tansu
    reports none and has none)."""
    return identity.holds_topics or (identity.front is None and bool(identity.settings))


def front_settings(settings: CompareSettings) -> tuple[str, ...]:
    """The options of the run's own front. With ``--settings same`` its KIP-848 groups' session and heartbeat are
    derived from the classic members' session (:func:`~zkconsumer.members.modern_member.consumer_group_timeouts_ms`):
    under KIP-848 they are the coordinator's settings, and Kafka's defaults (45 s) against the classic members' 4 s
    would make a SIGKILLed member's partitions wait eleven times longer for a setting, not for the protocol (Kafka
    sets them per group, ``consumer.session.timeout.ms``; this front sets them for its groups, which are only this
    run's); and a classic session under Kafka's 6 s minimum is allowed. With ``--settings stock``: none, Kafka's
    defaults."""
    from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, consumer_group_options
    from zkconsumer.members.modern_member import consumer_group_timeouts_ms

    if settings.settings_mode != SAME:
        return ()
    options = consumer_group_options(*consumer_group_timeouts_ms(settings.session_timeout_ms))
    if settings.session_timeout_ms < KAFKA_MIN_SESSION_MS:
        options = (*SHORT_CLASSIC_SESSIONS, *options)
    return options


def without_kip848_at_broker(settings: CompareSettings, default_protocols: bool,
                             say: Callable[[str], None]) -> CompareSettings:
    """The default protocols at a broker's own coordinator that does not run KIP-848 (Tansu's; Kafka's runs it from
    4.0): its protocols left out, in one line (named with ``--protocols``, they are tried, and their run stops at the
    first scene, saying why)."""
    runs = settings.identity.runs_kip848 if settings.identity is not None else settings.coordinator != "broker"
    if not default_protocols or runs:
        return settings
    kept = tuple(p for p in settings.protocols if p.group_protocol != "consumer")
    if len(kept) < len(settings.protocols):
        say(f"{PREFIX}{', '.join(KIP848_PROTOCOLS)} left out: the broker's own group coordinator does not run KIP-848 "
            f"(name them in --protocols to try)")
    return replace(settings, protocols=kept)


def _played(settings: CompareSettings, where: str,
            on_scene: Callable[[str, Scene, bool, float], None] | None) -> Comparison:
    """Play the script on servers already there, measure, write the report."""
    settings.output_dir.mkdir(parents=True, exist_ok=True)
    runs = compare_protocols(settings, on_scene=on_scene)
    if settings.messages is not None and settings.messages.error is not None:
        raise UsageError(settings.messages.error)
    results, json_path, html_path = written(settings, runs, f"run {settings.run_id} of scenario "
                                            f"{settings.scenario.name!r} on the {where}")
    coordinator = None if settings.identity is None else settings.identity.coordinator
    outcomes = {run.protocol.name: _outcome(run, result, coordinator if run.protocol.family == "modern" else None)
                for run, result in zip(runs, results, strict=True)}
    return Comparison(settings, ComparisonResult(outcomes, json_path, html_path), tuple(problems(results)))


def written(settings: CompareSettings, runs: Sequence[ProtocolRun],
            what: str) -> tuple[list[ProtocolResult], Path, Path]:
    """The runs measured and the report written (``report.json``, ``report.html``), its settings and notes built
    from what ran: the coordinator as it named itself, each protocol's session and heartbeat; ``what`` opens the
    page's description of the run (``run abc123 of scenario 'migration' on the ...``). The comparison's and
    ``demo --protocol``'s."""
    results = collect(list(runs), settings.output_dir)
    identity = settings.identity
    timeouts = {p.name: settings.timeouts(p) for p in settings.protocols}
    coordinator = (identity.name if identity is not None
                   else "the broker's own group coordinator" if settings.coordinator == "broker"
                   else f"the {settings.coordinator}'s group coordinator")
    meta = (f"{what}: {settings.partitions} partitions per topic (at the start), "
            f"{settings.rate:g} messages a second to each, {settings.pace:g} s of steady production after each "
            f"scene (the scenes begin together for every protocol), timeouts {settings.settings_mode} ("
            + "; ".join(f"{name} {t.phrase()}" for name, t in timeouts.items())
            + f"), the members' revoke cost {settings.revoke_costs()}, modern groups at {coordinator}"
            + ("" if settings.app is None else f", the application {settings.app.handle}"))
    json_path, html_path = write_report(settings.output_dir, results, {
        "run_id": settings.run_id, "partitions": settings.partitions, "rate": settings.rate,
        "pace": settings.pace, "session_timeout_ms": settings.session_timeout_ms,
        "settings": settings.settings_mode, "coordinator": settings.coordinator,
        "coordinator_software": None if identity is None else identity.coordinator,
        "coordinator_identity": None if identity is None else {
            "kind": identity.kind, "name": identity.name, "bootstrap": identity.bootstrap,
            "cluster_id": identity.cluster_id, "front": identity.front, "settings": identity.settings,
            "broker_software": identity.broker_software, "broker_software_source": identity.broker_software_source},
        "group_timeouts_ms": None if settings.group_timeouts_ms is None else dict(zip(
            ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"), settings.group_timeouts_ms,
            strict=True)),
        "timeouts": {name: t.as_json() for name, t in timeouts.items()},
        "session_scenes": list(session_scenes(settings.scenario)),
        "move": move_settings(settings.scenario),
        "scenario": settings.scenario.name,
        "revoke_ms": {m.name: settings.member_revoke_ms(m.name) for m in settings.scenario.members}},
        meta, member_settings(settings), coordinator_line(identity))
    return results, json_path, html_path


def move_settings(scenario: Scenario) -> dict[str, Any] | None:
    """A move from ZooKeeper as ``report.json`` says it: its legacy members' assignor, whether they dual-committed,
    the cutover's scene, where the modern members found their offsets and their ``auto.offset.reset``; None for a
    scenario that plays no cutover."""
    for scene in scenario.scenes:
        for action in scene.actions:
            if action.kind == CUTOVER:
                return {"legacy": f"partition.assignment.strategy={MOVE_LEGACY_STRATEGY}",
                        "dual_commit": scenario.uses(DUAL_COMMIT) is not None, "cutover_scene": scene.number,
                        "offsets": action.offsets, "reset": action.reset,
                        "offsets_said": CUTOVER_OFFSETS_SAID[action.offsets]}
    return None


def coordinator_line(identity: CoordinatorIdentity | None) -> str | None:
    """The modern groups' coordinator for the page: its name with its version, and where the version was learned."""
    if identity is None:
        return None
    source = identity.broker_software_source if identity.kind == "broker" else "the front's own DescribeConfigs"
    return f"{identity.name}" + (f"; its version from {source}" if source else "")


def _outcome(run: ProtocolRun, result: ProtocolResult, coordinator: str | None) -> ProtocolOutcome:
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
                   run.events_path, state_dir(run), coordinator, run.committed, run.committed_error,
                   m.double_ownership)

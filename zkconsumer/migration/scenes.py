"""The comparison's cast and script: which protocols can be compared, and the scenario every protocol plays, in the
same order, so that their figures line up scene by scene.

The script is a scenario file (:mod:`zkconsumer.scenarios`). The default, the shipped ``rolling-restart``, is what a
production group lives through most: a deploy (six members on twelve partitions, each stopped cleanly and started
again in turn) and then a crash (one member SIGKILLed: its session has to expire before anyone takes its
partitions). A group of that size is where the protocols differ as they do on Apache Kafka: an eager rebalance
stops every partition until the last member has heard of it, an incremental one stops only what moves. The shipped
``migration`` is the small script (three members join one by one, one is SIGKILLed, one leaves: the demo's story
without the topic growing), quick to play and to read, where members that give partitions up for free make eager
rounds as cheap as incremental ones. The shipped ``upgrade`` is the second half of a migration: a broker-side group
upgraded in place to KIP-848 member by member (its ``upgrade`` action), which only the modern protocols play: the
classic ones converted by it, the KIP-848 ones restarted. :func:`check_playable` refuses what a protocol's members
cannot do.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.errors import UsageError
from zkconsumer.scenarios.model import CUTOVER, DUAL_COMMIT, EXPIRE, GROW, UPGRADE, Action, Scenario, Scene
from zkconsumer.scenarios.parse import load

__all__ = ["CONSUMER_ALIAS", "KIP848_PROTOCOLS", "KNOWN", "PROTOCOLS", "Action", "Protocol", "Scene", "check_playable",
           "default_scenario", "legacy_only", "modern_only", "parse_protocols"]


@dataclass(frozen=True, slots=True)
class Protocol:
    """``family``: ``legacy`` (zkconsumer members, a ZooKeeper group) or ``modern`` (confluent-kafka members, a
    broker-side group). ``group_protocol``: ``zookeeper``, ``classic`` (JoinGroup and SyncGroup, the members'
    leader assigns) or ``consumer`` (KIP-848's ConsumerGroupHeartbeat, the coordinator assigns). ``strategy`` is
    what the members are given to choose the assignor: the ``partition.assignment.strategy`` of a legacy or classic
    member, the ``group.remote.assignor`` (the server-side assignor) of a KIP-848 one."""

    name: str
    family: str
    strategy: str
    # eager (everything is revoked at every rebalance), cooperative (only what moves, in rounds of JoinGroup and
    # SyncGroup) or incremental (only what moves, reconciled by the coordinator one member at a time: KIP-848)
    rebalancing: str
    group_protocol: str = "classic"

    @property
    def kind(self) -> str:
        """Who runs the group, as a migrating team names it (the page's table; ``rebalancing`` beside it)."""
        return {"zookeeper": "legacy ZooKeeper", "consumer": "KIP-848 consumer"}.get(self.group_protocol, "classic")

    @property
    def title(self) -> str:
        """The name a sentence uses: ``eager range`` where ``range`` alone would not say which family it is."""
        if self.group_protocol == "consumer":
            return f"KIP-848 consumer ({self.strategy})"
        if self.group_protocol == "classic" and self.rebalancing == "eager":
            return f"eager {self.strategy}"
        return self.name


PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("legacy-range", "legacy", "range", "eager", "zookeeper"),
    Protocol("legacy-roundrobin", "legacy", "roundrobin", "eager", "zookeeper"),
    Protocol("range", "modern", "range", "eager"),
    Protocol("roundrobin", "modern", "roundrobin", "eager"),
    Protocol("cooperative-sticky", "modern", "cooperative-sticky", "cooperative"),
)}
"""The protocols compared when ``--protocols`` is not given."""

KIP848_PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("consumer-uniform", "modern", "uniform", "incremental", "consumer"),
    Protocol("consumer-range", "modern", "range", "incremental", "consumer"),
)}
"""KIP-848's consumer group protocol with each of Kafka's server-side assignors: compared by default where the
coordinator speaks it (ConsumerGroupHeartbeat: the front's, a Kafka 4 broker's), left out at one that does not (the
embedded broker's own)."""

KNOWN: dict[str, Protocol] = {**PROTOCOLS, **KIP848_PROTOCOLS}
#: ``consumer``: KIP-848's consumer protocol with Kafka's default server-side assignor, as ``group.protocol=consumer``
#: alone gets it
CONSUMER_ALIAS, CONSUMER_DEFAULT = "consumer", "consumer-uniform"


def parse_protocols(text: str) -> tuple[Protocol, ...]:
    """``legacy-range,cooperative-sticky`` -> the protocols, in the order given, each once; ``consumer`` is
    :data:`CONSUMER_DEFAULT`."""
    names = [CONSUMER_DEFAULT if name.strip() == CONSUMER_ALIAS else name.strip() for name in text.split(",")
             if name.strip()]
    if not names:
        raise UsageError("--protocols names no protocol (known: " + ", ".join(KNOWN) + ")")
    unknown = [name for name in names if name not in KNOWN]
    if unknown:
        raise UsageError(f"unknown protocol {unknown[0]!r} (known: {', '.join(KNOWN)})")
    return tuple(KNOWN[name] for name in dict.fromkeys(names))


#: why a modern group cannot see its topic grow at a server that is neither a front nor has CreatePartitions
NO_GROWTH = ("a modern group sees a topic grow through a front's Metadata (which holds it smaller until the scene) or "
             "the broker's CreatePartitions, and this bootstrap server is no front and the broker has no "
             "CreatePartitions (Tansu)")


#: why a legacy group cannot play ``upgrade``
NO_UPGRADE = ("a ZooKeeper group has no in-place path to KIP-848 (its members and offsets live in ZooKeeper, and a "
              "broker-side group of the same name is another group: Kafka's way was a migration, the scenario "
              "'migration')")


#: why a legacy protocol cannot play the move
NO_MOVE = ("the move's target is a broker-side group: its members are legacy ones until the cutover and modern ones of "
           "the protocol after it")


def check_playable(scenario: Scenario, protocols: tuple[Protocol, ...], modern_growth: bool = True) -> None:
    """Refuse, before anything starts, an action a protocol's members cannot do, in one line: a legacy member cannot
    be upgraded in place (:data:`NO_UPGRADE`), a modern group cannot see its topic grow where ``modern_growth`` is
    false (a bootstrap server that is neither a front nor a broker with CreatePartitions; the legacy groups see it
    through the bridge, which holds the topic smaller in ZooKeeper until the scene), a modern member has no ZooKeeper
    session to expire (``pause`` it for longer than its session instead), and takes no settings of the file's; the
    move from ZooKeeper (``dual_commit``, ``cutover``) is played by modern protocols only, its target, and its topic
    does not grow (its legacy and modern members would see the growth through different servers)."""
    legacy = [p.name for p in protocols if p.family == "legacy"]
    static = next((m.name for m in scenario.members if m.static), None)
    if legacy and static is not None:
        raise UsageError(f"{scenario.source}: members.{static}.static cannot be played by {', '.join(legacy)}: "
                         f"static membership (group.instance.id, KIP-345) has no ZooKeeper equivalent; play it with "
                         f"modern protocols only")
    grown = scenario.uses(GROW)
    if scenario.moves and grown is not None:
        raise UsageError(f"{scenario.source}: {grown}: {GROW} cannot be played in a move from ZooKeeper (its "
                         f"members are legacy ones, then modern ones)")
    for kind, reason in ((UPGRADE, NO_UPGRADE), (DUAL_COMMIT, NO_MOVE), (CUTOVER, NO_MOVE)):
        found = scenario.uses(kind)
        if legacy and found is not None:
            raise UsageError(f"{scenario.source}: {found}: {kind} cannot be played by {', '.join(legacy)}: "
                             f"{reason}; play it with modern protocols only")
    modern = [p.name for p in protocols if p.family == "modern"]
    if not modern:
        return
    for kind, why in ((GROW, NO_GROWTH if not modern_growth else None),
                      (EXPIRE, "a modern member has no ZooKeeper session (pause it for longer than its session "
                               "timeout instead)")):
        where = scenario.uses(kind)
        if why is None:
            continue
        if where is not None:
            raise UsageError(f"{scenario.source}: {where}: {kind} cannot be played by {', '.join(modern)}: {why}; "
                             f"play it with legacy protocols only")
    configured = next((m for m in scenario.members if m.config), None)
    if configured is not None:
        raise UsageError(f"{scenario.source}: members.{configured.name}.config: settings over a member's own apply to "
                         f"legacy members only, not to {', '.join(modern)} (a modern member runs with the settings "
                         f"the report lists); play it with legacy protocols only")


def legacy_only(scenario: Scenario) -> bool:
    """Whether only legacy members can play the scenario (see :func:`check_playable`): it expires a session or sets
    members' settings."""
    return scenario.uses(EXPIRE) is not None or any(m.config for m in scenario.members)


def modern_only(scenario: Scenario) -> bool:
    """Whether only modern protocols can play the scenario (see :func:`check_playable`): it upgrades a member to
    KIP-848 in place, or plays the move from ZooKeeper to a modern protocol."""
    return scenario.uses(UPGRADE) is not None or scenario.moves


def default_scenario() -> Scenario:
    """The comparison's script when ``--scenario`` is not given: the shipped ``rolling-restart``."""
    return load(DEFAULT_SCENARIO)


DEFAULT_SCENARIO = "rolling-restart"

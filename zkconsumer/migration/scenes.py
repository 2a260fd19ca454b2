"""The comparison's script and cast, as data: which protocols can be compared, and the membership changes every
protocol goes through, in the same order, so that their figures line up scene by scene.

The script is the demo's story without the topic growing (Tansu has no CreatePartitions, and a modern group
would see the growth through a metadata refresh, not a znode watch, which is another comparison): one member; a
second joins; a third joins; one is SIGKILLed (its session has to expire before anyone takes its partitions); one
leaves cleanly (it hands its partitions over at once).
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.errors import UsageError


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
"""KIP-848's consumer group protocol with each of Kafka's server-side assignors: selectable, not compared by
default, since a coordinator that speaks it (ConsumerGroupHeartbeat) is needed, which the embedded broker is not."""

KNOWN: dict[str, Protocol] = {**PROTOCOLS, **KIP848_PROTOCOLS}


def parse_protocols(text: str) -> tuple[Protocol, ...]:
    """``legacy-range,cooperative-sticky`` -> the protocols, in the order given, each once."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError("--protocols names no protocol (known: " + ", ".join(KNOWN) + ")")
    unknown = [name for name in names if name not in KNOWN]
    if unknown:
        raise UsageError(f"unknown protocol {unknown[0]!r} (known: {', '.join(KNOWN)})")
    return tuple(KNOWN[name] for name in dict.fromkeys(names))


@dataclass(frozen=True, slots=True)
class Action:
    """``start`` a member process, ``kill`` it (SIGKILL) or ``stop`` it (SIGTERM: it leaves the group)."""

    kind: str
    member: str


@dataclass(frozen=True, slots=True)
class Scene:
    """``title`` is the scene's short name (what it does to whom); ``label`` numbers it, as the charts, the
    timelines' markers and ``report.json`` show it."""

    number: int
    title: str
    action: Action
    note: str

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}"


SCENES = (
    Scene(1, "m1 starts", Action("start", "m1"),
          "m1 joins alone and is given every partition."),
    Scene(2, "m2 joins", Action("start", "m2"),
          "Eager protocols stop every partition of every member; cooperative-sticky revokes only what moves to m2."),
    Scene(3, "m3 joins", Action("start", "m3"),
          "The same again with three members: half of m1's and m2's partitions stay where they are under "
          "cooperative-sticky."),
    Scene(4, "m2 SIGKILLed", Action("kill", "m2"),
          "m2 cannot say goodbye: its partitions are fetched by nobody until its session expires (in ZooKeeper for "
          "the legacy group, at the group coordinator for the modern ones)."),
    Scene(5, "m1 leaves", Action("stop", "m1"),
          "SIGTERM: m1 releases its partitions and leaves cleanly; the group rebalances at once."),
)

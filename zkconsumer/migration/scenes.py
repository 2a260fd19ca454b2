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
    broker-side group); ``strategy`` is the ``partition.assignment.strategy`` the members are given."""

    name: str
    family: str
    strategy: str
    rebalancing: str  # eager (everything is revoked at every rebalance) or cooperative (only what moves)


PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("legacy-range", "legacy", "range", "eager"),
    Protocol("legacy-roundrobin", "legacy", "roundrobin", "eager"),
    Protocol("range", "modern", "range", "eager"),
    Protocol("roundrobin", "modern", "roundrobin", "eager"),
    Protocol("cooperative-sticky", "modern", "cooperative-sticky", "cooperative"),
)}


def parse_protocols(text: str) -> tuple[Protocol, ...]:
    """``legacy-range,cooperative-sticky`` -> the protocols, in the order given, each once."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError("--protocols names no protocol (known: " + ", ".join(PROTOCOLS) + ")")
    unknown = [name for name in names if name not in PROTOCOLS]
    if unknown:
        raise UsageError(f"unknown protocol {unknown[0]!r} (known: {', '.join(PROTOCOLS)})")
    return tuple(PROTOCOLS[name] for name in dict.fromkeys(names))


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

"""The session and heartbeat every protocol runs with in a comparison, and where each comes from: the members' own
settings (a legacy member's ``zookeeper.session.timeout.ms``, a classic member's ``session.timeout.ms`` and
``heartbeat.interval.ms``) or, under KIP-848, the coordinator's (``group.consumer.session.timeout.ms``,
``group.consumer.heartbeat.interval.ms``, read from it: :func:`zkconsumer.kafka.coordinator_identity.identify`).

Two ways to set them (``--settings``): ``same``, one session for every protocol (the comparison's 4 s, or the
scenario's), so that the protocols are compared and not their settings; ``stock``, each protocol at its own
defaults, what a team migrating without touching them meets: the legacy side at Kafka 0.10.0.1's
(``zookeeper.session.timeout.ms`` 6000; ZooKeeper itself has no heartbeat setting of the client's), the classic
side at Kafka 3.0's and later (``session.timeout.ms`` 45000, ``heartbeat.interval.ms`` 3000), KIP-848 at the
coordinator's defaults (45000 and 5000, Kafka 4.x). Only these timeouts differ between the two: the members' other
short intervals (commits, retries) stay the comparison's.

Pure: settings and the coordinator's reported configuration in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zkconsumer.migration.scenes import Protocol
from zkconsumer.scenarios.model import KILL, PAUSE, Scenario

SAME, STOCK = "same", "stock"
#: how the protocols' timeouts are set (see the module's docstring)
SETTINGS_MODES = (SAME, STOCK)
#: Kafka 0.10.0.1's ``zookeeper.session.timeout.ms``
STOCK_LEGACY_SESSION_MS = 6000
#: Kafka 3.0's and later ``session.timeout.ms`` and ``heartbeat.interval.ms`` (KIP-735)
STOCK_CLASSIC_SESSION_MS, STOCK_CLASSIC_HEARTBEAT_MS = 45_000, 3_000
#: KIP-848's are the coordinator's own, read from it (``group.consumer.*``), not assumed
CONSUMER_SESSION = "group.consumer.session.timeout.ms"
CONSUMER_HEARTBEAT = "group.consumer.heartbeat.interval.ms"
MIN_SESSION = "group.min.session.timeout.ms"
#: a KIP-848 group's own session and heartbeat (Kafka 4.0's group configs), within the broker's bounds below
GROUP_SESSION, GROUP_HEARTBEAT = "consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"
GROUP_BOUNDS = ((GROUP_SESSION, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
                (GROUP_HEARTBEAT, "group.consumer.min.heartbeat.interval.ms",
                 "group.consumer.max.heartbeat.interval.ms"))


@dataclass(frozen=True, slots=True)
class Timeouts:
    """One protocol's session and heartbeat as they ran; ``None`` where nobody reported it (a coordinator that does
    not say its KIP-848 settings; ZooKeeper's heartbeat, which the client does not set). ``source``: whose settings
    they are, by their names."""

    session_ms: int | None
    heartbeat_ms: int | None
    source: str

    def as_json(self) -> dict[str, object]:
        return {"session_timeout_ms": self.session_ms, "heartbeat_interval_ms": self.heartbeat_ms,
                "source": self.source}

    def phrase(self) -> str:
        """``session 4.0 s, heartbeat 0.7 s (the member's session.timeout.ms, heartbeat.interval.ms)``."""
        session = "session not reported" if self.session_ms is None else f"session {self.session_ms / 1000:g} s"
        heartbeat = "" if self.heartbeat_ms is None else f", heartbeat {self.heartbeat_ms / 1000:g} s"
        return f"{session}{heartbeat} ({self.source})"


def member_timeouts(group_protocol: str, mode: str, session_timeout_ms: int) -> tuple[int, int]:
    """The ``(session, heartbeat)`` of a member that sets its own (``group_protocol`` ``zookeeper`` or ``classic``)
    under ``mode``: heartbeat 0 for a legacy member (ZooKeeper's client pings at a third of the session) and, for a
    classic member, where the members' own rule applies (a sixth of the session). A KIP-848 member's are its
    coordinator's, not asked here."""
    assert group_protocol != "consumer", "a KIP-848 member's timeouts are its coordinator's"
    if group_protocol == "zookeeper":
        return (STOCK_LEGACY_SESSION_MS if mode == STOCK else session_timeout_ms), 0
    if mode == STOCK:
        return STOCK_CLASSIC_SESSION_MS, STOCK_CLASSIC_HEARTBEAT_MS
    return session_timeout_ms, 0


def in_force(protocol: Protocol, mode: str, session_timeout_ms: int, coordinator: Mapping[str, str],
             classic_heartbeat_ms: int, upgrades: bool = False,
             group_configs: tuple[int, int] | None = None) -> Timeouts:
    """What ``protocol`` ran with: its members' settings, or for KIP-848 the coordinator's as it reported them
    (``coordinator``: its group settings by Kafka's names), or the group's own where the run set them on each group
    (``group_configs``: ``consumer.session.timeout.ms``, ``consumer.heartbeat.interval.ms``).
    ``classic_heartbeat_ms``: the classic members' heartbeat for a session of ``session_timeout_ms`` when they set
    none (the members' own rule). ``upgrades``: the scenario upgrades members to KIP-848 in place, whose session and
    heartbeat are then the coordinator's, which the source says beside the classic members' own."""
    if group_configs is not None:
        consumer = Timeouts(*group_configs, f"the group's {GROUP_SESSION}, {GROUP_HEARTBEAT}, set by the run")
    else:
        consumer = Timeouts(_number(coordinator.get(CONSUMER_SESSION)), _number(coordinator.get(CONSUMER_HEARTBEAT)),
                            f"the coordinator's {CONSUMER_SESSION}, {CONSUMER_HEARTBEAT}")
    if protocol.group_protocol == "consumer":
        return consumer
    session, heartbeat = member_timeouts(protocol.group_protocol, mode, session_timeout_ms)
    if protocol.family == "legacy":
        return Timeouts(session, None, "the member's zookeeper.session.timeout.ms")
    source = "the member's session.timeout.ms, heartbeat.interval.ms"
    if upgrades:
        source += f"; once upgraded, {consumer.phrase()}"
    return Timeouts(session, heartbeat or classic_heartbeat_ms, source)


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().lstrip("-").isdigit() else None


def too_short(timeouts: Mapping[str, Timeouts], protocols: tuple[Protocol, ...],
              coordinator: Mapping[str, str]) -> str | None:
    """Why the coordinator would refuse a classic member's session (below its ``group.min.session.timeout.ms``:
    INVALID_SESSION_TIMEOUT at every JoinGroup), in words; None when it would not, or did not say its bound."""
    bound = _number(coordinator.get(MIN_SESSION))
    if bound is None:
        return None
    short = [(p.name, timeouts[p.name].session_ms) for p in protocols
             if p.group_protocol == "classic" and (timeouts[p.name].session_ms or bound) < bound]
    if not short:
        return None
    names = ", ".join(name for name, _ in short)
    return (f"{names}: session.timeout.ms {short[0][1]} is below the coordinator's {MIN_SESSION} {bound}, which "
            f"refuses every JoinGroup of such a member (INVALID_SESSION_TIMEOUT)")



def outside_bounds(group_configs: tuple[int, int], coordinator: Mapping[str, str]) -> str | None:
    """Why a Kafka broker would refuse a group's ``(consumer.session.timeout.ms, consumer.heartbeat.interval.ms)``
    (outside its ``group.consumer.min/max.*`` bounds: INVALID_CONFIG), in words; None when it would not, or did not
    say its bounds."""
    for value, (name, low, high) in zip(group_configs, GROUP_BOUNDS, strict=True):
        lowest, highest = _number(coordinator.get(low)), _number(coordinator.get(high))
        if (lowest is not None and value < lowest) or (highest is not None and value > highest):
            return (f"{name} {value} is outside the coordinator's {low} {lowest} to {high} {highest}, which refuses "
                    f"it (INVALID_CONFIG)")
    return None


def session_scenes(scenario: Scenario) -> tuple[int, ...]:
    """The scenes whose figures a session timeout decides: a member SIGKILLed (its partitions wait out its session)
    or paused (expired or not, depending on its session)."""
    return tuple(scene.number for scene in scenario.scenes
                 if any(action.kind in (KILL, PAUSE) for action in scene.actions))

"""A scenario as values: the topic, the production, the members and the scenes, each scene a list of actions.

The same values serve the demo (one group, narrated) and the migration comparison (one group per protocol, on one
clock); each command says which parts it plays (:attr:`Production.burst` is the demo's, :attr:`Production.rate` the
comparison's) and refuses, before anything starts, an action its members cannot do.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the actions a scene may take, in the words of the file (``{ kill = "c2" }``)
START, STOP, KILL, PAUSE, EXPIRE, UPGRADE = "start", "stop", "kill", "pause", "expire", "upgrade"
GROW, SETTLE, WAIT = "grow", "settle", "wait"
MEMBER_ACTIONS = (START, STOP, KILL, PAUSE, EXPIRE, UPGRADE)
ACTIONS = (*MEMBER_ACTIONS, GROW, SETTLE, WAIT)
#: actions after which the group must rebalance: the scene settles only once every member completed one since
MEMBERSHIP_ACTIONS = (START, STOP, KILL, EXPIRE, UPGRADE, GROW)
#: the group protocol an ``upgrade`` restarts a member with: KIP-848's, Kafka's ``group.protocol=consumer``
UPGRADED_GROUP_PROTOCOL = "consumer"
#: a member's ``revoke_ms`` at most: longer would outlast the comparison's session and rebalance timeouts
MAX_REVOKE_MS = 30_000


@dataclass(frozen=True, slots=True)
class Action:
    """``start`` a member process, ``stop`` it (SIGTERM: it leaves cleanly), ``kill`` it (SIGKILL), ``pause`` it
    (SIGSTOP for ``seconds``, then SIGCONT), ``expire`` its ZooKeeper session (a second client on it, closed),
    ``upgrade`` it (stopped cleanly and started again at once in the same group with ``group.protocol=consumer``,
    KIP-848's protocol with the coordinator's default assignor, as a deploy that changes only that setting does; a
    later ``start`` of it keeps that protocol), ``grow`` the topic by ``partitions``, ``settle`` (wait until the
    group has settled) or ``wait`` ``seconds``.

    ``upgrade`` is Kafka 4.x's online upgrade of a classic group, member by member: the first upgraded member's
    heartbeat converts the live group, the classic members go on in it until they are upgraded too. A member already
    on KIP-848 is simply restarted. A ZooKeeper group has no such path (its members and offsets live in ZooKeeper,
    and a broker-side group of the same name is another group): the commands refuse it for legacy members."""

    kind: str
    member: str = ""
    seconds: float = 0.0
    partitions: int = 0

    def describe(self) -> str:
        """The action in the words of the file, for the narration and the listing."""
        if self.kind == PAUSE:
            return f"pause {self.member} for {self.seconds:g} s"
        if self.kind == GROW:
            return f"grow the topic by {self.partitions}"
        if self.kind == WAIT:
            return f"wait {self.seconds:g} s"
        if self.kind == SETTLE:
            return "wait until the group has settled"
        if self.kind == UPGRADE:
            return f"upgrade {self.member} to group.protocol={UPGRADED_GROUP_PROTOCOL}"
        return f"{self.kind} {self.member}"


@dataclass(frozen=True, slots=True)
class Scene:
    """``title`` is the scene's short name; ``label`` numbers it, as the charts, the timelines' markers and
    ``report.json`` show it; ``waiting_for`` is what the wait indicator says while the scene settles."""

    number: int
    title: str
    note: str
    actions: tuple[Action, ...] = ()
    waiting_for: str = "the group to settle"

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}"

    @property
    def changes_membership(self) -> bool:
        """Whether the scene's actions make the group rebalance (a pause or a wait alone may not)."""
        return any(a.kind in MEMBERSHIP_ACTIONS for a in self.actions)

    @property
    def grows(self) -> int:
        return sum(a.partitions for a in self.actions if a.kind == GROW)


@dataclass(frozen=True, slots=True)
class Member:
    """A member of the cast: ``streams`` consumer threads (a legacy member's; a modern member is one consumer),
    ``config``, consumer settings over the member's own (legacy members: ``--config KEY=VALUE``), and ``revoke_ms``,
    its application's cost of giving partitions up (:mod:`zkconsumer.members.revoke_cost`): the application's, not
    the client's, so every kind of member plays it."""

    name: str
    streams: int = 1
    config: tuple[tuple[str, str], ...] = ()
    revoke_ms: int = 0


@dataclass(frozen=True, slots=True)
class Topic:
    """``name`` is the topic's name, or the start of it where the command makes a fresh topic per run."""

    name: str = "demo"
    partitions: int = 4


@dataclass(frozen=True, slots=True)
class Production:
    """``burst``: messages to every partition at the start of each scene (the demo's, so that offsets and lag move
    between the tables it prints); ``rate``: messages a second to each group's topic, steadily from the first scene
    to the last (the comparison's, so that every pause shows as messages waiting)."""

    burst: int = 25
    rate: float = 50.0


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str  # the shipped name, or the file's stem
    title: str
    description: str
    topic: Topic
    production: Production
    members: tuple[Member, ...]
    scenes: tuple[Scene, ...]
    session_timeout_ms: int | None = None  # None: the command's own default
    source: str = ""  # where it was read from, for messages

    @property
    def grown(self) -> int:
        """Partitions the scenes add in all."""
        return sum(scene.grows for scene in self.scenes)

    @property
    def final_partitions(self) -> int:
        return self.topic.partitions + self.grown

    def member(self, name: str) -> Member:
        return next(m for m in self.members if m.name == name)

    def uses(self, kind: str) -> str | None:
        """Where the first action of ``kind`` is (``scene 5, action 1``: numbered from 1, as the scenes are), or
        None."""
        for scene in self.scenes:
            for j, action in enumerate(scene.actions, 1):
                if action.kind == kind:
                    return f"scene {scene.number}, action {j}"
        return None

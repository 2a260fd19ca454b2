"""A scenario as values: the topic, the production, the members and the scenes, each scene a list of actions.

The same values serve the demo (one group, narrated) and the migration comparison (one group per protocol, on one
clock); each command says which parts it plays (:attr:`Production.burst` is the demo's, :attr:`Production.rate` the
comparison's) and refuses, before anything starts, an action its members cannot do.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the actions a scene may take, in the words of the file (``{ kill = "c2" }``)
START, STOP, KILL, PAUSE, EXPIRE, UPGRADE = "start", "stop", "kill", "pause", "expire", "upgrade"
DUAL_COMMIT, CUTOVER, BOUNCE, RESTART = "dual_commit", "cutover", "bounce", "restart"
GROW, SETTLE, WAIT = "grow", "settle", "wait"
MEMBER_ACTIONS = (START, STOP, KILL, PAUSE, EXPIRE, UPGRADE, DUAL_COMMIT, BOUNCE)
ACTIONS = (*MEMBER_ACTIONS, CUTOVER, RESTART, GROW, SETTLE, WAIT)
#: what a ``restart`` restarts: the ZooKeeper, or the modern groups' coordinator (a front, or the broker)
RESTART_ZOOKEEPER, RESTART_COORDINATOR = "zookeeper", "coordinator"
RESTART_SERVERS = (RESTART_ZOOKEEPER, RESTART_COORDINATOR)
#: actions after which the group must rebalance: the scene settles only once every member completed one since
MEMBERSHIP_ACTIONS = (START, STOP, KILL, EXPIRE, UPGRADE, DUAL_COMMIT, BOUNCE, CUTOVER, GROW)
#: the settings a ``dual_commit`` restarts a legacy member with: the first step of Kafka's documented migration of
#: offsets ("Migrating offsets from ZooKeeper to Kafka", Kafka 0.9 to 2.0 docs)
DUAL_COMMIT_CONFIG = (("offsets.storage", "kafka"), ("dual.commit.enabled", "true"))
#: where a ``cutover``'s modern members find their offsets: ``kafka``, as the legacy members left them there (after
#: a dual commit; with none, nothing), or ``exported``, exported from ZooKeeper and imported into Kafka between the
#: stop and the start (the offsets tools' path: ``zkconsumer offsets migrate --to kafka``)
CUTOVER_OFFSETS = ("kafka", "exported")
#: each in words, for the narration and the page
CUTOVER_OFFSETS_SAID = {"kafka": "as the legacy members left them in Kafka",
                        "exported": "exported from ZooKeeper and imported into Kafka by the offsets tools "
                                    "(zkconsumer offsets migrate --to kafka)"}
#: a ``cutover``'s modern members' ``auto.offset.reset``: Kafka's default, ``latest``, unless the action says
CUTOVER_RESETS = ("latest", "earliest")
#: the assignor of a move's legacy members (the members before the ``cutover``): the legacy consumer's default
MOVE_LEGACY_STRATEGY = "range"
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

    ``bounce`` stops a member cleanly and starts it again at once, as a deploy restarts one instance: a dynamic
    member leaves the group and joins it again (two rebalances), a static one (``Member.static``) keeps its place
    (no LeaveGroup, KIP-345; its instance comes back under the same ``group.instance.id``).

    ``restart`` stops a server (SIGTERM) and starts it again where its clients know it, its data kept: ``server``
    ``zookeeper`` or ``coordinator`` (the modern groups', the run's own front or the broker); a fault of the servers
    every protocol shares, played once for all of them.

    ``dual_commit`` and ``cutover`` play the move from ZooKeeper (``spec/migration.md``, sections 2 and 3), for a
    modern protocol, the move's target: until the ``cutover`` the group is a ZooKeeper group, its members legacy
    ones (:data:`MOVE_LEGACY_STRATEGY`), in the same group id. ``dual_commit`` restarts a legacy member (stopped
    cleanly, started again at once) with :data:`DUAL_COMMIT_CONFIG`, kept for its later starts: a rolling restart of
    them all is the first step of Kafka's documented migration. ``cutover`` is the second: every running member
    stopped cleanly, then each started again as a modern member of the protocol in the same group id, reading its
    offsets from Kafka (``offsets``: :data:`CUTOVER_OFFSETS`) and with ``auto.offset.reset`` ``reset``
    (:data:`CUTOVER_RESETS`) where it finds none; a member started after it is modern too. Without the first step
    Kafka holds no offset of the group, and ``latest`` skips the backlog.

    ``upgrade`` is Kafka 4.x's online upgrade of a classic group, member by member: the first upgraded member's
    heartbeat converts the live group, the classic members go on in it until they are upgraded too. A member already
    on KIP-848 is simply restarted. A ZooKeeper group has no such path (its members and offsets live in ZooKeeper,
    and a broker-side group of the same name is another group): the commands refuse it for legacy members."""

    kind: str
    member: str = ""
    seconds: float = 0.0
    partitions: int = 0
    offsets: str = ""  # a cutover's: CUTOVER_OFFSETS
    server: str = ""  # a restart's: RESTART_SERVERS
    reset: str = ""  # a cutover's: CUTOVER_RESETS

    def describe(self) -> str:
        """The action in the words of the file, for the narration and the listing."""
        if self.kind == RESTART:
            return f"restart the {self.server} (stopped, started again where its clients know it)"
        if self.kind == BOUNCE:
            return f"bounce {self.member} (stop it cleanly, start it again at once)"
        if self.kind == DUAL_COMMIT:
            return f"restart {self.member} with " + ", ".join(f"{k}={v}" for k, v in DUAL_COMMIT_CONFIG)
        if self.kind == CUTOVER:
            return (f"cut over: stop every legacy member, start them as modern members in the same group "
                    f"(offsets {CUTOVER_OFFSETS_SAID.get(self.offsets, self.offsets)}, "
                    f"auto.offset.reset={self.reset})")
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
    the client's, so every kind of member plays it; ``static``: a modern member with a ``group.instance.id`` of its
    own (static membership, KIP-345; KIP-848 keeps it), which the legacy consumer has no equivalent of."""

    name: str
    streams: int = 1
    config: tuple[tuple[str, str], ...] = ()
    revoke_ms: int = 0
    static: bool = False


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

    @property
    def moves(self) -> bool:
        """Whether the scenario plays the move from ZooKeeper (a ``dual_commit`` or a ``cutover``): its members are
        legacy ones until the cutover, whatever protocol plays it."""
        return self.uses(DUAL_COMMIT) is not None or self.uses(CUTOVER) is not None

    def uses(self, kind: str) -> str | None:
        """Where the first action of ``kind`` is (``scene 5, action 1``: numbered from 1, as the scenes are), or
        None."""
        for scene in self.scenes:
            for j, action in enumerate(scene.actions, 1):
                if action.kind == kind:
                    return f"scene {scene.number}, action {j}"
        return None

"""The servers a run plays on, provided in one place for the migration comparison (:mod:`zkconsumer.migration`), the
demo (:mod:`zkconsumer.demo.play`) and the pytest plugin (:mod:`zkconsumer.testing.plugin`): the caller says what it
wants in a :class:`ServerOptions`, :func:`provide_servers` yields the addresses (:class:`Servers`), and whatever was
started for the block is stopped when it ends, whatever ends it.

ZooKeeper and the broker come from the first of these that applies:

1. **Given** (``zookeeper``, ``bootstrap``): used as they are. A given ZooKeeper is checked as a client reaches it (a
   session, and its chroot), and refused in one line naming the option that gave it. Next to the embedded
   environment, a ZooKeeper given without a broker brings the brokers registered in it.
2. **The embedded environment** (``embedded=ENVIRONMENT``: ``zkconsumer local``'s, in ``run_dir``). One that is
   running is used and left running, and so is one whose dead servers ``up`` starts again; one started here is
   stopped at the end unless ``leave_running`` (the demo leaves it up for the commands it prints).
3. **The session's own** (``embedded=SESSION``: the pytest plugin's, the benchmarks'): each server from its variable
   (``ZK_CONNECT``, ``KAFKA_BOOTSTRAP``), else a container when a Docker-compatible engine answers, else a local
   process, its files in ``workdir`` (:mod:`.provider`). The plugin takes the two apart (:func:`zookeeper_server`,
   :func:`kafka_server`), so that a test of ZooKeeper alone starts no broker.

With ``front``, the groups get a front of the run's own before the broker (its files in ``workdir/front``, its
options ``front_options``: the comparison's group timeouts, the plugin's choice of coordinator). It is put before a
broker given or started here, never before one the user named in ``KAFKA_BOOTSTRAP`` (a user's Kafka has its own
coordinator). On the embedded environment it takes the place of the environment's front where that front runs the
groups itself; an environment started with ``--direct-broker``, or whose front relays the group APIs to the broker,
keeps that choice. Without ``front``, clients are given what the servers give them (the environment's front, the
address given).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from zkconsumer.embedded.broker import KAFKA_BOOTSTRAP_ENV, provide_broker
from zkconsumer.embedded.broker_software import BrokerSoftware, broker_software
from zkconsumer.embedded.front import BrokerAddresses, front_coordinates_groups
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.embedded.zookeeper import provide_zookeeper
from zkconsumer.errors import EnvironmentSetupError, ServerUnavailableError, UsageError, ZkConsumerError
from zkconsumer.scenarios.model import RESTART_COORDINATOR, RESTART_ZOOKEEPER
from zkconsumer.zk.client import require_chroot
from zkconsumer.zk.client import zookeeper as zookeeper_client
from zkconsumer.zk.cluster import registered_bootstrap

#: where the servers that are not given come from: the embedded environment of ``zkconsumer local``...
ENVIRONMENT = "environment"
#: ... or servers of the block's own, each from its variable, a container or a local process
SESSION = "session"


@dataclass(frozen=True)
class ServerOptions:
    """What a run asks of its servers (see the module's docstring)."""

    #: a ZooKeeper to use as it is (its chroot must exist); None: the embedded one
    zookeeper: str | None = None
    #: a broker to use as it is; None: the embedded one, or beside a given ZooKeeper on the environment's path the
    #: brokers registered there
    bootstrap: str | None = None
    #: ENVIRONMENT or SESSION: where the servers not given come from
    embedded: str = ENVIRONMENT
    #: the embedded environment's run directory (None: the default, as ``zkconsumer local`` finds it)
    run_dir: Path | None = None
    #: where the servers started for the block keep their files (``zookeeper/``, ``broker/``, ``front/``)
    workdir: Path | None = None
    #: a front of the run's own before the broker, for its groups
    front: bool = False
    #: that front's command-line options (none: Kafka's group settings)
    front_options: tuple[str, ...] = ()
    #: an embedded environment started for the block stays up after it
    leave_running: bool = False
    #: what named ``zookeeper``, for the one line that refuses it
    zookeeper_option: str = "--zookeeper"


class Restarts:
    """The servers a run can restart, as a scenario's ``restart`` action asks: ``zookeeper`` (the embedded
    environment's) or ``coordinator`` (the run's own front, else the embedded environment's front where it runs the
    groups, else its broker); each stopped (SIGTERM) and started again where its clients know it, its data kept
    (``local up`` heals the environment's). Servers given by address are not the run's to restart."""

    def __init__(self, environment: bool, run_dir: Path | None, front: FrontProcess | None) -> None:
        self.environment = environment  # the servers are the embedded environment's, in ``run_dir`` (None: default)
        self.run_dir = run_dir
        self.front = front

    def refusal(self, server: str) -> str | None:
        """Why ``server`` cannot be restarted here, or None."""
        if (self.front is not None and server == RESTART_COORDINATOR) or self.environment:
            return None
        return (f"{server} is not this run's to restart: only the embedded environment's servers and the run's own "
                f"front can be (these were given by address)")

    def restart(self, server: str) -> str:
        """Stop ``server`` and start it again; returns what was restarted, in words."""
        if server == RESTART_COORDINATOR and self.front is not None:
            self.front.restart()
            return f"the run's own front at {self.front.address}"
        refused = self.refusal(server)
        if refused is not None:
            raise EnvironmentSetupError(refused)
        from zkconsumer.embedded.environment import LocalEnvironment

        env = LocalEnvironment(self.run_dir)
        records = env.recorded()
        front_log = env.front_log()
        names = ([n for n in records if n == "zookeeper" or n.startswith("zookeeper-")] if server == RESTART_ZOOKEEPER
                 else ["front"] if front_log is not None and front_coordinates_groups(front_log) else ["broker"])
        for name in names:
            records[name].stop()
        env.up()
        return f"the embedded environment's {', '.join(names)}"


@dataclass(frozen=True)
class Servers:
    """The addresses of the servers provided."""

    zookeeper: str
    #: what clients are given: the run's own front, else what the servers give (the environment's front, the broker)
    bootstrap: str
    #: the broker itself, its own group coordinator
    broker: str
    #: the events (JSON lines) of the run's own front, when one was started
    front_log: Path | None = None
    #: on the embedded environment, what becomes of it (``started for this run``, ``started, left running``,
    #: ``already running, left running``...); None elsewhere
    environment: str | None = None
    #: the embedded environment's run directory the broker may be recorded in (None: the default)
    run_dir: Path | None = None
    #: what of these servers can be restarted, and how (a scenario's ``restart``)
    restarts: Restarts | None = None

    @property
    def addresses(self) -> BrokerAddresses:
        return BrokerAddresses(self.bootstrap, self.broker)

    def broker_software(self) -> BrokerSoftware | None:
        """What the broker runs (``Apache Kafka 4.4.0``), as the environment recorded it where it is that
        environment's broker (given by its addresses or found by its run directory), else as its ApiVersions say
        (:mod:`.broker_software`); asked when called."""
        return broker_software(self.broker, self.run_dir)

    def describe(self) -> str:
        """One line for the person who started the run: ``embedded environment: ZooKeeper ..., broker ... through a
        front of this run's own at ... (started for this run)``."""
        if self.bootstrap == self.broker:
            through = ""
        elif self.front_log is not None:
            through = f" through a front of this run's own at {self.bootstrap}"
        else:
            through = f" through the front at {self.bootstrap}"
        where = "servers given" if self.environment is None else "embedded environment"
        state = "" if self.environment is None else f" ({self.environment})"
        return f"{where}: ZooKeeper {self.zookeeper}, broker {self.broker}{through}{state}"


@dataclass(frozen=True)
class _Broker:
    """A broker found, before the run's front: what its clients are given, and whether a front of the run's own may
    stand before it."""

    bootstrap: str
    broker: str
    frontable: bool
    front_log: Path | None = None
    front: FrontProcess | None = None  # the run's own front, once started


@contextlib.contextmanager
def provide_servers(options: ServerOptions) -> Iterator[Servers]:
    """ZooKeeper, the broker and (with ``front``) the run's front for the block; everything started here is stopped
    at its end, in reverse order."""
    with contextlib.ExitStack() as stack:
        # 1. ZooKeeper and the broker: given, the embedded environment's, or the session's own
        environment = None
        if options.zookeeper is None and options.embedded == ENVIRONMENT:
            zookeeper, broker, environment = stack.enter_context(_environment(options))
        else:
            zookeeper = stack.enter_context(zookeeper_server(options))
            broker = stack.enter_context(_broker(options, zookeeper))
        # 2. the run's own front before the broker, where asked for and where the broker is one to front
        broker = stack.enter_context(_fronted(broker, options))
        restarts = Restarts(environment is not None, options.run_dir, broker.front)
        yield Servers(zookeeper, broker.bootstrap, broker.broker, broker.front_log, environment, options.run_dir,
                      restarts)


@contextlib.contextmanager
def zookeeper_server(options: ServerOptions) -> Iterator[str]:
    """ZooKeeper alone: the one given, checked, or the session's own."""
    if options.zookeeper:
        _check_given(options.zookeeper, options.zookeeper_option)
        yield options.zookeeper
        return
    if options.embedded != SESSION:
        raise ValueError("the embedded environment's ZooKeeper comes with its broker: provide_servers()")
    with provide_zookeeper(_workdir(options) / "zookeeper") as connect:
        yield connect


@contextlib.contextmanager
def kafka_server(options: ServerOptions) -> Iterator[BrokerAddresses]:
    """The broker alone, with the run's front before it where asked for: the one given, or the session's own."""
    if options.embedded != SESSION and not options.bootstrap:
        raise ValueError("the embedded environment's broker comes with its ZooKeeper: provide_servers()")
    with _broker(options) as found, _fronted(found, options) as fronted:
        yield BrokerAddresses(fronted.bootstrap, fronted.broker)


def _check_given(connect: str, option: str) -> None:
    """As a client reaches it: a user's ensemble may answer no four-letter word but ``srvr`` (3.5.3 and later)."""
    try:
        with zookeeper_client(connect, quiet=True) as client:
            require_chroot(client, connect)
    except ZkConsumerError as error:
        raise ServerUnavailableError(f"{option} {connect}: {error}") from None


@contextlib.contextmanager
def _broker(options: ServerOptions, zookeeper: str | None = None) -> Iterator[_Broker]:
    if options.bootstrap:
        yield _Broker(options.bootstrap, options.bootstrap, frontable=True)
    elif options.embedded == ENVIRONMENT and zookeeper is not None:
        registered = _registered(zookeeper)
        yield _Broker(registered, registered, frontable=True)
    else:
        users = bool(os.environ.get(KAFKA_BOOTSTRAP_ENV))
        with provide_broker(_workdir(options) / "broker") as broker:
            yield _Broker(broker, broker, frontable=not users)


def _registered(connect: str) -> str:
    """The brokers registered in the ZooKeeper at ``connect``; one line when there is none."""
    with zookeeper_client(connect, quiet=True) as zk:
        bootstrap = registered_bootstrap(zk)
    if bootstrap is None:
        raise UsageError(f"no broker is registered in ZooKeeper at {connect}; give --bootstrap-server")
    return bootstrap


@contextlib.contextmanager
def _environment(options: ServerOptions) -> Iterator[tuple[str, _Broker, str]]:
    """The embedded environment, started unless it runs (its dead servers started again); stopped at the end if it was
    started here and not ``leave_running``."""
    from zkconsumer.embedded.environment import LocalEnvironment

    env = LocalEnvironment(options.run_dir)
    running = env.endpoints() is not None
    # a run directory with a state is the user's environment, whose dead servers up() starts again: left running
    ours = not running and not env.state_path.exists()
    endpoints = env.up()
    try:
        front_log = env.front_log()
        coordinating = front_log is not None and front_coordinates_groups(front_log)
        state = ("already running, left running" if running
                 else "started again where it stopped, left running" if not ours
                 else "started, left running" if options.leave_running else "started for this run")
        yield endpoints["zookeeper"], _Broker(endpoints["bootstrap_servers"], endpoints["broker"], coordinating), state
    finally:
        if ours and not options.leave_running:
            env.down()


@contextlib.contextmanager
def _fronted(found: _Broker, options: ServerOptions) -> Iterator[_Broker]:
    if not (options.front and found.frontable):
        yield found
        return
    with FrontProcess(found.broker, _workdir(options) / "front", options=options.front_options) as front:
        yield replace(found, bootstrap=front.address, front_log=front.log_path, front=front)


def _workdir(options: ServerOptions) -> Path:
    if options.workdir is None:
        raise ValueError("ServerOptions.workdir: the servers started for the block need a directory for their files")
    return Path(options.workdir)

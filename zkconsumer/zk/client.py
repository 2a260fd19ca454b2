"""Opening a kazoo client, with the failure a person can act on.

kazoo retries a dead ensemble forever by default; every command here instead gives up after the
connection timeout with a message naming the ensemble and how to get one.

An address that turns the connection down at once (nothing listens on the port, the host does not resolve or
cannot be routed to) is not worth the timeout: kazoo would try it again and again until the timeout ends, so a
mistyped port would cost every command 6 s. Before kazoo starts, each host of the connect string gets one plain TCP
connection attempt (:func:`refusals`); when every host refuses, the error comes at once. A host that accepts the
connection, or does not answer within a second (a firewall dropping packets), is left to kazoo and its timeout:
only a ZooKeeper handshake tells a live server from a silent one.

Credentials (``auth``, a :class:`~zkconsumer.security.ZkAuth`) are sent with the session; ZooKeeper answers a scheme
it does not know (or SASL it cannot verify) by failing every later request, so the client makes one round trip
at once and turns that into an :class:`~zkconsumer.errors.AuthenticationError` naming the scheme. ``acl`` becomes
kazoo's ``default_acl``: every ``create``, ``ensure_path`` and transaction create then uses it.

Credentials never reach a log: kazoo logs every request it sends at DEBUG, its Auth packet with the password in
clear (``Auth(auth_type=0, scheme='digest', auth='alice:<password>')``), so an application that turns the root logger
to DEBUG would write it. Every client opened here has :class:`CredentialFilter` on the logger kazoo writes to, which
rewrites such a record's arguments before any handler sees it (``auth='alice:***'``).

A chroot that does not exist is not kazoo's warning (a ``UserWarning`` naming kazoo's source file, printed once
however the caller handles it): whoever needs the chroot asks :func:`require_chroot`, which fails in one line.

No request waits for ever. kazoo's synchronous calls (``get``, ``exists``, a transaction's ``commit``...) wait for
their async result with no timeout, and so does every ``.get()`` on a result of an ``*_async`` call; a request queued
while kazoo reconnects waits until a connection is made, which against a server that accepts connections but
does not answer (paused, overloaded, half cut off) is never. Every client here has a :class:`BoundedHandler`, whose
results wait at most the client's session timeout when asked to wait without one, then raise
:class:`RequestTimeoutError`. Past the session timeout the session has expired anyway (and kazoo's read timeout, two
thirds of it, has dropped a connection that stopped answering), so no answer worth waiting for comes later. A wait
with a timeout of its own (``get(timeout=...)``) keeps it.

kazoo's own two callback threads are left to wait as kazoo means them to: a watch's re-read there (a ``DataWatch``
reads its znode again when the connection drops) waits for the next connection, and is sent at once on it. Bounded,
it would go round the watch's retry, whose pauses grow to a minute, and hold every later watch callback behind it
for as long after the server is back. The thread has nothing to deliver while the connection is down, and a stop
ends its wait (closing the session fails what is queued). The client's own retry (``client.retry``, with which a
``ChildrenWatch`` reads) pauses at most :data:`COMMAND_RETRY_MAX_DELAY_S` between attempts, rather than kazoo's hour.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import logging
import math
import select
import socket
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError, ConnectionLoss
from kazoo.handlers.threading import AsyncResult, SequentialThreadingHandler
from kazoo.handlers.utils import fileobj_to_fd
from kazoo.hosts import collect_hosts
from kazoo.protocol.serialization import Auth
from kazoo.protocol.states import KeeperState
from kazoo.retry import KazooRetry

from zkconsumer.errors import (
    AuthenticationError,
    EnvironmentSetupError,
    ServerUnavailableError,
    UsageError,
    ZkConsumerError,
)
from zkconsumer.security import ZkAuth

DEFAULT_CONNECT_TIMEOUT = 6.0
#: the longest pause of a client's command retry (``client.retry``) between two attempts
COMMAND_RETRY_MAX_DELAY_S = 2.0
#: how long the TCP attempt that looks for refusals may take in all, at most: a refusal comes within a round trip
REFUSAL_PROBE_S = 1.0
#: failures that come at once and would come again: no server on the port, no route to the host
_REFUSED = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}


class ChrootMissingError(ZkConsumerError):
    """The connect string's chroot is not a znode of the ensemble."""


class RequestTimeoutError(ConnectionLoss, ServerUnavailableError):
    """A ZooKeeper request got no answer within its client's bound, the session timeout.

    A :class:`~kazoo.exceptions.ConnectionLoss` to kazoo (its retries retry it) and to every caller that already waits
    out a lost connection (a rebalance attempt fails and is retried); a
    :class:`~zkconsumer.errors.ServerUnavailableError` to the CLI, which prints it as one line. As after any lost
    connection, whether a write was applied is unknown: the request stays queued in kazoo, and may reach the server
    once it answers again."""

    def __init__(self, server: str, bound_s: float) -> None:
        self.server = server
        self.bound_s = bound_s
        super().__init__(f"ZooKeeper at {server} did not answer a request within {bound_s:g} s (the session "
                         f"timeout): the server is overloaded, paused or cut off")

    def __reduce__(self) -> tuple[type[RequestTimeoutError], tuple[str, float]]:  # unpickled from its fields
        return type(self), (self.server, self.bound_s)


class BoundedAsyncResult(AsyncResult):
    """kazoo's threading async result; asked to wait without a timeout, it waits its handler's bound (but on the
    handler's own callback threads, see the module's docstring)."""

    # A result read after its answer came (the pipelined reads of thousands of znodes read most so) is kazoo's own
    # get: the thread lookup and the second locked wait cost several times the read itself.
    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        handler = self._handler
        if not block or timeout is not None or self.ready() or handler.on_callback_thread():
            return super().get(block, timeout)
        if not super().wait(handler.bound_s):
            raise RequestTimeoutError(handler.server, handler.bound_s)
        return super().get(block=False)

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the result is ready, after waiting at most ``timeout`` (the handler's bound when ``None``)."""
        if self.ready():
            return True
        handler = self._handler
        if timeout is None and not handler.on_callback_thread():
            timeout = handler.bound_s
        return bool(super().wait(timeout))


class BoundedHandler(SequentialThreadingHandler):
    """kazoo's threading handler, whose async results (every request's, so every synchronous call's) wait at most
    ``bound_s`` when no timeout is given: :class:`RequestTimeoutError` naming ``server`` after that. Its own callback
    threads excepted (see the module's docstring)."""

    def __init__(self, server: str, bound_s: float) -> None:
        super().__init__()
        self.server = server
        self.bound_s = bound_s
        self._callback_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()

    def async_result(self) -> BoundedAsyncResult:
        return BoundedAsyncResult(self)

    def on_callback_thread(self) -> bool:
        """Whether the calling thread is one of this handler's callback threads (watches, completions)."""
        return threading.current_thread() in self._callback_threads

    # kazoo's private hook, through which start() makes both callback threads (as is the result's ``_handler``): the
    # kazoo versions pinned in pyproject.toml are those tests/zk/test_kazoo_internals.py passes on
    def _create_thread_worker(self, work_queue: Any) -> threading.Thread:
        thread: threading.Thread = super()._create_thread_worker(work_queue)
        self._callback_threads.add(thread)
        return thread

    def select(self, rlist: Sequence[Any], wlist: Sequence[Any], xlist: Sequence[Any],
               timeout: float | None = None) -> tuple[list[Any], list[Any], list[Any]]:
        """kazoo's select (:func:`poll_select` where the platform has ``poll``)."""
        if not hasattr(select, "poll"):
            return super().select(rlist, wlist, xlist, timeout)
        return poll_select(rlist, wlist, xlist, timeout)


_POLL_READ = select.POLLIN if hasattr(select, "poll") else 0
_POLL_WRITE = select.POLLOUT if hasattr(select, "poll") else 0


def poll_select(rlist: Sequence[Any], wlist: Sequence[Any], _xlist: Sequence[Any],
                timeout: float | None = None) -> tuple[list[Any], list[Any], list[Any]]:
    """kazoo's ``selector_select`` by one ``poll()`` call: the same answer (readable objects, writable objects, none
    in error; a descriptor ready both ways counts as readable) and the same errors, without a
    selector's epoll descriptor made, filled and closed again at every call. kazoo's connection thread selects
    before every read and write of every request and answer (three times an answer), and an epoll selector costs
    some 60 us where ``poll`` costs 9: thousands of pipelined requests a rebalance, under the interpreter's lock that
    the other threads of the process wait for."""
    if timeout is not None:
        if not isinstance(timeout, int | float):
            raise TypeError("timeout must be a number")
        if timeout < 0:
            raise ValueError("timeout must be non-negative")
    by_fd: dict[int, tuple[int, list[Any]]] = {}  # descriptor -> the events asked, the objects asking
    for fileobjs, mask in ((rlist, _POLL_READ), (wlist, _POLL_WRITE)):
        for fileobj in fileobjs:
            fd = fileobj_to_fd(fileobj)
            events, objs = by_fd.get(fd, (0, []))
            objs.append(fileobj)
            by_fd[fd] = (events | mask, objs)
    poller = select.poll()
    for fd, (events, _objs) in by_fd.items():
        poller.register(fd, events)
    ready = poller.poll(None if timeout is None else math.ceil(timeout * 1000))
    readable: list[Any] = []
    writable: list[Any] = []
    for fd, happened in ready:
        if happened & select.POLLNVAL:
            raise ValueError("Invalid event mask or fd")
        # As selectors' PollSelector reads poll's answer (an error or a hang-up is either way, of those asked),
        # then as kazoo sorts it.
        asked, objs = by_fd[fd]
        if happened & ~_POLL_WRITE and asked & _POLL_READ:
            readable.extend(objs)
        elif happened & ~_POLL_READ and asked & _POLL_WRITE:
            writable.extend(objs)
    return readable, writable, []


class CredentialFilter(logging.Filter):
    """Redacts the credentials of kazoo's Auth packets in a record's arguments; lets every record through."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(arg, Auth) for arg in args):
            record.args = tuple(_redacted(arg) if isinstance(arg, Auth) else arg for arg in args)
        return True


def _redacted(packet: Auth) -> Auth:
    """The packet with its secret replaced: a digest's user name stays (it is in every ACL), the password goes."""
    user, colon, _ = str(packet.auth).partition(":")
    return packet._replace(auth=f"{user}:***" if packet.scheme == "digest" and colon else "***")


CREDENTIAL_FILTER = CredentialFilter()
#: the logger kazoo writes to unless given another (``KazooClient(logger=...)``)
KAZOO_LOGGER = logging.getLogger("kazoo.client")

_silent = logging.getLogger("zkconsumer.kazoo.probe")
_silent.addHandler(logging.NullHandler())
_silent.propagate = False


def redact_credentials(logger: logging.Logger) -> None:
    """Install :class:`CredentialFilter` on ``logger`` (once)."""
    if CREDENTIAL_FILTER not in logger.filters:
        logger.addFilter(CREDENTIAL_FILTER)


def open_client(
    connect: str, timeout: float = DEFAULT_CONNECT_TIMEOUT, retry_forever: bool = False, quiet: bool = False,
    session_timeout: float | None = None, auth: ZkAuth | None = None, acl: Sequence[Any] | None = None,
    before_start: Callable[[KazooClient], object] | None = None,
) -> KazooClient:
    """A started client; ``retry_forever`` keeps reconnecting after a later loss (long-running services),
    ``quiet`` silences kazoo's own connection warnings (probes, where failing is an answer). ``timeout`` bounds
    the first connection; the session timeout asked of the server defaults to it. ``before_start`` is given the
    client before it connects (to watch its first handshake too). Its requests wait at most the session timeout
    (:class:`BoundedHandler`)."""
    if auth is not None and auth.scheme == "sasl" and auth.sasl_options() is None:
        raise UsageError(f"zookeeper.auth ({auth.describe()}): SASL credentials are user:password (DIGEST-MD5); "
                         f"other mechanisms, such as Kerberos, are not supported")
    started = time.monotonic()
    refused = refusals(connect, min(timeout, REFUSAL_PROBE_S))
    if refused:
        raise ServerUnavailableError(
            f"ZooKeeper at {connect} did not answer: {'; '.join(refused)}; check the address, or start the "
            f"embedded environment with `zkconsumer local up`"
        )
    remaining = max(timeout - (time.monotonic() - started), 0.1)
    retry = KazooRetry(max_tries=-1, max_delay=2.0) if retry_forever else KazooRetry(max_tries=0)
    extra: dict[str, Any] = {"logger": _silent} if quiet else {}
    redact_credentials(_silent if quiet else KAZOO_LOGGER)
    if auth is not None:
        extra["auth_data"] = auth.auth_data()
        if auth.sasl_options() is not None:
            # Without pure-sasl kazoo retries its "Missing SASL support" for the whole timeout: say it at once.
            if importlib.util.find_spec("puresasl") is None:
                raise EnvironmentSetupError(
                    f"zookeeper.auth ({auth.describe()}) needs the pure-sasl package for SASL: pip install pure-sasl")
            extra["sasl_options"] = auth.sasl_options()
    if acl:
        extra["default_acl"] = list(acl)
    session_s = session_timeout or timeout
    client = KazooClient(hosts=connect, timeout=session_s, connection_retry=retry,
                         command_retry=KazooRetry(max_tries=-1, max_delay=COMMAND_RETRY_MAX_DELAY_S),
                         handler=BoundedHandler(connect, session_s), **extra)
    # A server refusing the credentials closes the session, and start() then waits out its timeout and reports
    # only that (its own stop() hides the state): note the refusal when it happens.
    refused_auth: list[bool] = []

    def watch_auth(_state: object) -> None:
        if client.client_state == KeeperState.AUTH_FAILED:
            refused_auth.append(True)

    client.add_listener(watch_auth)
    if before_start is not None:
        before_start(client)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="No chroot path exists", category=UserWarning)
            client.start(timeout=remaining)
    except Exception as exc:  # kazoo raises its timeout, or a socket error, for an unreachable ensemble
        auth_failed = isinstance(exc, AuthFailedError) or bool(refused_auth)
        with contextlib.suppress(Exception):
            client.stop()
            client.close()
        if auth_failed and auth is not None:
            raise _refused(connect, auth) from None
        raise ServerUnavailableError(
            f"ZooKeeper at {connect} did not answer within {timeout:g} s ({type(exc).__name__}); check the "
            f"address, or start the embedded environment with `zkconsumer local up`"
        ) from None
    client.remove_listener(watch_auth)
    if auth is not None:
        try:
            client.exists("/")
        except AuthFailedError:
            close_client(client)
            raise _refused(connect, auth) from None
    return client


def require_chroot(client: KazooClient, connect: str) -> None:
    """Fail in one line when the chroot of ``connect`` does not exist: every read there would find nothing and every
    write fail, which reads as an empty cluster rather than a mistyped address."""
    if client.chroot and client.exists("/") is None:
        raise ChrootMissingError(f"ZooKeeper at {connect}: the chroot {client.chroot} does not exist; check the "
                                 f"connect string, or create it first")


def _refused(connect: str, auth: ZkAuth) -> AuthenticationError:
    return AuthenticationError(
        f"ZooKeeper at {connect} refused the credentials of zookeeper.auth ({auth.describe()}): is the scheme "
        f"{auth.scheme!r} enabled on the server?"
    )


def refusals(connect: str, budget_s: float = REFUSAL_PROBE_S) -> list[str]:
    """Why each host of ``connect`` turned a TCP connection down at once (``"127.0.0.1:2181 refused the
    connection"``), or an empty list as soon as one did not: it accepted, or did not answer within what is left of
    ``budget_s``. A connect string kazoo cannot parse is left for kazoo to report."""
    try:
        hosts, _chroot = collect_hosts(connect)
    except ValueError:
        return []
    deadline = time.monotonic() + budget_s
    reasons: list[str] = []
    for host, port in hosts:
        try:
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            reasons.append(f"{host} does not resolve ({exc.strerror})")
            continue
        for family, kind, proto, _name, address in addresses:
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            try:
                with socket.socket(family, kind, proto) as probe:
                    probe.settimeout(left)
                    probe.connect(address)
            except OSError as exc:
                if exc.errno not in _REFUSED:
                    return []  # timed out: maybe a server behind a slow link, kazoo decides
                reasons.append(f"{host}:{port} {_why(exc)}")
                continue
            return []  # something listens: only the handshake tells whether it is ZooKeeper, and alive
    return list(dict.fromkeys(reasons))  # a name with several addresses is one host


def _why(exc: OSError) -> str:
    if exc.errno == errno.ECONNREFUSED:
        return "refused the connection (nothing listens there)"
    return f"cannot be reached ({exc.strerror})"


def close_client(client: KazooClient) -> None:
    with contextlib.suppress(Exception):
        client.stop()
    with contextlib.suppress(Exception):
        client.close()


@contextlib.contextmanager
def zookeeper(connect: str, timeout: float = DEFAULT_CONNECT_TIMEOUT, quiet: bool = False,
              auth: ZkAuth | None = None, acl: Sequence[Any] | None = None) -> Iterator[KazooClient]:
    client = open_client(connect, timeout, quiet=quiet, auth=auth, acl=acl)
    try:
        yield client
    finally:
        close_client(client)



def session_id(zk: KazooClient) -> int:
    """The client's session id; ConnectionLoss while it has none (connecting, reconnecting, closed), which callers
    handle as any connection loss."""
    client_id = zk.client_id
    if client_id is None:
        raise ConnectionLoss("not connected to ZooKeeper: the session is unknown")
    return client_id[0]

"""A canary for the parts of kazoo that are not its public API and that zkconsumer leans on: each test fails in one
line naming what changed in the installed kazoo and which module of ours depends on it, so that a kazoo outside the
range pinned in pyproject.toml (the versions this was checked on) is caught here rather than as a wait that is no
longer bounded, a session fence that silently stops fencing or a claim sent with other records.

- ``zk/client.py``: :class:`~zkconsumer.zk.client.BoundedHandler` overrides
  ``SequentialThreadingHandler._create_thread_worker(work_queue)`` to learn kazoo's two callback threads (``start()``
  makes them through it), and its results read ``AsyncResult._handler``; its ``select`` (one ``poll()`` call,
  ``kazoo.handlers.utils.fileobj_to_fd`` reading each object) is what the connection waits on only if the
  connection's reads and writes select through their handler;
- ``zk/session_liveness.py``: wraps the client's connection handler (``KazooClient._connection``) methods
  ``_submit(request, timeout, xid)``, ``_read_header(timeout)`` and ``_connect(host, hostip, port)``, and reads
  ``KazooClient._session_timeout`` (milliseconds); where they are missing it attaches nothing, without a word;
- ``zk/batched_transaction.py``: ``kazoo.protocol.paths._prefix_root(root, path)``, and a transaction's
  ``operations`` list, filled with kazoo's own records (``Create``, ``SetData``, ``Delete``).

No server: a client that is never started and a handler started alone.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.handlers import utils
from kazoo.handlers.threading import AsyncResult, SequentialThreadingHandler
from kazoo.protocol import paths
from kazoo.protocol import serialization as records
from kazoo.protocol.connection import ConnectionHandler
from time_scale import bounded

from zkconsumer.zk.client import BoundedHandler
from zkconsumer.zk.session_liveness import SessionLiveness

KAZOO = f"kazoo {version('kazoo')}"
#: an address nothing is asked of: the client is never started
NOWHERE = "127.0.0.1:1"


def changed(what: str, user: str) -> None:
    """Fail in one line: what changed in this kazoo, and who relies on it."""
    pytest.fail(f"{KAZOO}: {what}; {user} relies on it (check it, then the kazoo pin in pyproject.toml)",
                pytrace=False)


def parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)


#: each private function we call or override: (its name, how to get it, its parameters, who relies on it)
PRIVATE_FUNCTIONS: list[tuple[str, Callable[[], Callable[..., Any]], list[str], str]] = [
    ("SequentialThreadingHandler._create_thread_worker", lambda: SequentialThreadingHandler._create_thread_worker,
     ["self", "work_queue"], "BoundedHandler (zk/client.py)"),
    ("kazoo.handlers.threading.AsyncResult.__init__", lambda: AsyncResult.__init__, ["self", "handler"],
     "BoundedAsyncResult (zk/client.py)"),
    ("ConnectionHandler._submit", lambda: ConnectionHandler._submit, ["self", "request", "timeout", "xid"],
     "SessionLiveness (zk/session_liveness.py)"),
    ("ConnectionHandler._read_header", lambda: ConnectionHandler._read_header, ["self", "timeout"],
     "SessionLiveness (zk/session_liveness.py)"),
    ("ConnectionHandler._connect", lambda: ConnectionHandler._connect, ["self", "host", "hostip", "port"],
     "SessionLiveness (zk/session_liveness.py)"),
    ("kazoo.protocol.paths._prefix_root", lambda: paths._prefix_root, ["root", "path", "trailing"],
     "_rooted (zk/batched_transaction.py)"),
    ("kazoo.handlers.utils.fileobj_to_fd", lambda: utils.fileobj_to_fd, ["fileobj"], "poll_select (zk/client.py)"),
]


@pytest.mark.parametrize(("name", "function", "expected", "user"), PRIVATE_FUNCTIONS,
                         ids=[name for name, *_ in PRIVATE_FUNCTIONS])
def test_the_private_functions_we_use_take_what_we_give(name, function, expected, user):
    try:
        found = parameters(function())
    except AttributeError:
        changed(f"{name} is gone", user)
    if found != expected:
        changed(f"{name} takes ({', '.join(found)}), not ({', '.join(expected)})", user)


def test_a_started_handler_makes_its_callback_threads_through_create_thread_worker():
    handler = BoundedHandler(NOWHERE, 1.0)
    handler.start()
    try:
        on_its_thread: dict[str, bool] = {}
        served = {"callback": threading.Event(), "completion": threading.Event()}

        def note(queue_name: str) -> None:
            on_its_thread[queue_name] = handler.on_callback_thread()
            served[queue_name].set()

        handler.callback_queue.put(lambda: note("callback"))
        handler.completion_queue.put(lambda: note("completion"))
        if not all(event.wait(bounded(5)) for event in served.values()):
            changed("a started handler's callback and completion queues are not served by its threads",
                    "BoundedHandler (zk/client.py)")
        if on_its_thread != {"callback": True, "completion": True}:
            changed("SequentialThreadingHandler.start() no longer makes its threads through _create_thread_worker, "
                    "so BoundedHandler would bound the waits of kazoo's own callback threads",
                    "BoundedHandler (zk/client.py)")
        assert not handler.on_callback_thread()  # the test's own thread is none of them
    finally:
        handler.stop()


def test_the_connection_selects_through_its_handler():
    for method in (ConnectionHandler._read, ConnectionHandler._write, ConnectionHandler._connect_attempt):
        if "self.handler.select(" not in inspect.getsource(method):
            changed(f"ConnectionHandler.{method.__name__} no longer waits through its handler's select, so the "
                    "handler's own (one poll() call, not an epoll selector made at every call) is not used",
                    "BoundedHandler.select (zk/client.py)")


def test_a_result_knows_its_handler():
    handler = BoundedHandler(NOWHERE, 1.0)
    if getattr(handler.async_result(), "_handler", None) is not handler:
        changed("AsyncResult no longer keeps its handler as _handler", "BoundedAsyncResult (zk/client.py)")


def test_a_client_has_the_connection_handler_and_session_timeout_session_liveness_reads():
    client = KazooClient(hosts=NOWHERE, timeout=7.0)
    connection = getattr(client, "_connection", None)
    if not isinstance(connection, ConnectionHandler):
        changed(f"KazooClient._connection is {type(connection).__name__}, not a ConnectionHandler",
                "SessionLiveness (zk/session_liveness.py)")
    if getattr(client, "_session_timeout", None) != 7000:
        changed(f"KazooClient._session_timeout is {getattr(client, '_session_timeout', None)!r}, not the timeout "
                "in milliseconds (7000)", "SessionLiveness (zk/session_liveness.py)")
    if SessionLiveness.attach(client) is None:
        changed("SessionLiveness.attach found nothing to watch on a client", "the session fence (consumer/)")


def test_a_transaction_is_a_list_of_kazoos_records():
    operations = getattr(KazooClient(hosts=NOWHERE).transaction(), "operations", None)
    if operations != []:
        changed(f"a new transaction's operations are {operations!r}, not an empty list",
                "commit_async (zk/batched_transaction.py)")
    for record, fields in ((records.Create, ("path", "data", "acl", "flags")),
                           (records.SetData, ("path", "data", "version")), (records.Delete, ("path", "version"))):
        if getattr(record, "_fields", None) != fields:
            changed(f"kazoo.protocol.serialization.{record.__name__}'s fields are {getattr(record, '_fields', None)}, "
                    f"not {fields}", "records (zk/batched_transaction.py)")
    if paths._prefix_root("/chroot", "/a//b") != "/chroot/a/b":
        changed("_prefix_root no longer puts a chroot before a normalised path", "_rooted (zk/batched_transaction.py)")

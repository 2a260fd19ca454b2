"""What a scenario does to a member process from outside, beyond starting and stopping it: freeze it (SIGSTOP, then
SIGCONT), as a long garbage-collection pause or a stalled VM would, and expire its ZooKeeper session, as a network
partition longer than the session timeout would.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from kazoo.client import KazooClient

from zkconsumer.zk.client import BoundedHandler


@contextlib.contextmanager
def paused(process: subprocess.Popen[str]) -> Iterator[None]:
    """The process stopped (SIGSTOP) for the block, and continued (SIGCONT) after it, whatever the block raises: a
    member left stopped would hold its partitions, and its session, for good."""
    with contextlib.suppress(OSError):
        process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            process.send_signal(signal.SIGCONT)


def expire_session(connect: str, session_file: Path) -> bool:
    """Close a member's session (id and password from the file a legacy member keeps with ``--session-file``), which
    the member then finds expired, as it would after a partition. False when the member has not written its session
    yet, or as :func:`close_session`."""
    try:
        sid, password = session_file.read_text(encoding="utf-8").split()
        client_id = (int(sid), bytes.fromhex(password))
    except (OSError, ValueError):
        return False
    return close_session(connect, client_id)


def close_session(connect: str, client_id: tuple[int, bytes]) -> bool:
    """A second client on the session ``client_id`` (id, password), closed: that closes the session for its owner
    too. False when the session is gone already, or when ZooKeeper did not answer (the two clients of one session
    take the connection from each other until one gives up: try again)."""
    other = KazooClient(hosts=connect, client_id=client_id, timeout=2.0, handler=BoundedHandler(connect, 2.0))
    try:
        other.start(5)
        # kazoo opens a new session of its own when the one asked for is gone: closing that would expire nothing
        joined = other.client_id is not None and other.client_id[0] == client_id[0]
    except Exception:  # the session is gone already, or ZooKeeper is away: closing it is moot
        return False
    finally:
        other.stop()
        other.close()
    return joined

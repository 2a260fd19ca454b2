"""A TCP relay on loopback that a fault can cut: what stands between two processes so that the connection between
them, and only it, can be broken as a network partition would (the other connections of both go on).

Used to cut a member off from ZooKeeper (tests/consumer/test_cut_off_member.py) and to cut one server of an ensemble
off from its peers while its clients still reach it (the chaos run's ``zk-cutoff``, through
:class:`zkconsumer.embedded.ensemble.LocalEnsemble`'s ``peer_ports``).
"""

from __future__ import annotations

import contextlib
import socket
import threading

from zkconsumer.embedded.process import LOOPBACK

RESET = b"\x01\x00\x00\x00\x00\x00\x00\x00"  # SO_LINGER on, 0 s: close() sends a reset


class Relay:
    """Forwards loopback TCP connections on :attr:`port` to ``target``; :meth:`cut` resets them all and refuses new
    ones until :meth:`restore`, which listens on the same port again. A connection whose target refuses it is closed
    (the target may be down for a while): the relay goes on accepting."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.restore()

    @property
    def is_cut(self) -> bool:
        return self._listener is None

    def restore(self) -> None:
        if self._listener is not None:
            return
        listener = socket.create_server((LOOPBACK, self.port))
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True, name=f"relay-{self.port}").start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it, which close() alone does not
            listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(OSError):  # its pipe may have closed it already
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
                conn.close()  # with linger 0: a reset, as a crashed peer would give

    def close(self) -> None:
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                # accepted just before a cut, connected upstream after it: cut as well, never piped through
                cut_meanwhile = self._listener is not listener
                if not cut_meanwhile:
                    self._conns += [client, upstream]
            if cut_meanwhile:
                for sock in (client, upstream):
                    with contextlib.suppress(OSError):
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
                        sock.close()
                return
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.close()
        with self._lock:  # a long run's closed pairs are not kept
            self._conns = [c for c in self._conns if c is not src and c is not dst]

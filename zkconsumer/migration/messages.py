"""The team's own messages, produced in a comparison instead of the runner's ``key=<n>``, ``<protocol>:<n>``: a
callable (``messages(n)`` gives the ``n``-th message, ``n`` from 0, or None when there are no more) or an iterable,
each message a tuple ``(key, value)`` or ``(key, value, headers)``: key bytes, str or None; value bytes or str;
headers a mapping or a sequence of ``(name, value)`` pairs.

Every protocol's topic gets the same messages in the same order: the ``n``-th message produced to each is message
``n``, drawn once and kept for the others. The producer places it itself, as librdkafka's ``consistent``
partitioner does (CRC32 of the key modulo the partitions the members see), so that one key's messages stay in one
partition and in order (as long as the topic does not grow), whatever the client; a message without a key goes
round-robin by its number. The measures then follow each message by where it was written (partition, offset), not by
its value, which the team's messages may repeat.

Pure but for the team's callable or iterable, which the producer thread calls; a message that is not one of the
shapes above stops production and is said in one line once the run ends (:attr:`MessageSource.error`); the first is
checked before anything starts (:meth:`MessageSource.check`).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.members.application import delivery_text

Messages = Callable[[int], Any] | Iterable[Any]


@dataclass(frozen=True, slots=True)
class OutMessage:
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...] = ()

    @property
    def key_text(self) -> str | None:
        return None if self.key is None else delivery_text(self.key)

    @property
    def value_text(self) -> str:
        return delivery_text(self.value)


def _bytes(value: Any, what: str, number: int) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise UsageError(f"messages: message {number}: its {what} is {type(value).__name__}, expected bytes or str")


def normalise(item: Any, number: int) -> OutMessage:
    """One of the team's messages as produced; a :class:`UsageError` of one line naming it by number otherwise."""
    if not isinstance(item, tuple) or len(item) not in (2, 3):
        raise UsageError(f"messages: message {number} is {type(item).__name__}, expected a tuple (key, value) or "
                         f"(key, value, headers)")
    key = None if item[0] is None else _bytes(item[0], "key", number)
    value = _bytes(item[1], "value", number)
    given = item[2] if len(item) == 3 else ()
    pairs = given.items() if isinstance(given, Mapping) else given
    try:
        headers = tuple((str(name), _bytes(v, f"header {name!r}", number)) for name, v in pairs)
    except (TypeError, ValueError):
        raise UsageError(f"messages: message {number}: its headers are not a mapping or (name, value) "
                         f"pairs") from None
    return OutMessage(key, value, headers)


def partition_for(message: OutMessage, number: int, partitions: int) -> int:
    """Where message ``number`` goes among ``partitions``: by its key as librdkafka's ``consistent`` partitioner
    (CRC32 of the key), round-robin by its number without one."""
    if message.key is None:
        return number % partitions
    return zlib.crc32(message.key) % partitions


class MessageSource:
    """The team's messages, each drawn once and kept, so that every protocol's topic gets message ``n`` the same."""

    def __init__(self, messages: Messages) -> None:
        self._call = messages if callable(messages) else None
        self._iterator: Iterator[Any] | None = None if callable(messages) else iter(messages)
        self._drawn: list[OutMessage] = []
        self._ended = False
        self._lock = threading.Lock()
        self.error: str | None = None

    def check(self) -> None:
        """Draw the first message now: a bad one is refused before anything starts (:class:`UsageError`)."""
        self.get(0)
        if self.error is not None:
            raise UsageError(self.error)

    def get(self, number: int) -> OutMessage | None:
        """Message ``number``; None once the messages ended (or one was bad: :attr:`error` says which)."""
        with self._lock:
            while len(self._drawn) <= number and not self._ended:
                try:
                    item = self._next()
                    if item is None:
                        self._ended = True
                        break
                    self._drawn.append(normalise(item, len(self._drawn)))
                except UsageError as exc:
                    self.error, self._ended = str(exc), True
                except Exception as exc:  # the team's callable or iterable raised: said in one line, as bad input
                    self.error = f"messages: message {len(self._drawn)}: {type(exc).__name__}: {exc}"
                    self._ended = True
            return self._drawn[number] if number < len(self._drawn) else None

    def _next(self) -> Any:
        if self._call is not None:
            return self._call(len(self._drawn))
        assert self._iterator is not None
        return next(self._iterator, None)

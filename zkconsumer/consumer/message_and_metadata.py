"""MessageAndMetadata, and the fetched records streams make them from.

Why two shapes for one message: the cost of a consumer written in Python is not in fetching but in what is done per
message, in Python's own calls. So a fetched chunk is not one object per message but :class:`FetchedRecords`: a
chunk's offsets, values and keys as lists, each made by the fetcher from librdkafka's ``Message`` objects in one
C-level pass (``map`` of an unbound method). The application's MessageAndMetadata is made from a row of those lists
at the moment the stream hands it out, by C calls (``zip`` and a tuple subclass), and is as short-lived as the
application keeps it.

The timestamp is the exception: librdkafka's ``Message.timestamp()`` builds a new tuple at every call, which made
its column the dearest of all (as much as the offsets, values and keys together, measured with the garbage
collection its tuples caused). So the chunk keeps the ``Message`` objects themselves (``sources``) and a timestamp is
read from its message only when asked for. Keeping them costs the collector some walking while a chunk waits in a
queue (they are tracked objects; bounded by ``queued.max.message.chunks`` chunks of at most 500), measured at well
under what the column cost.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from confluent_kafka import Message

from zkconsumer.config import identity_decoder

try:  # the C accessor namedtuple's fields use (CPython), faster to read than a property over itemgetter
    from _collections import _tuplegetter as _field  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - other interpreters

    def _field(index: int, doc: str) -> Any:
        return property(itemgetter(index), doc=doc)


Decoder = Callable[[bytes | None], Any]

# Unbound C methods, mapped over a whole run (the offset is set on every message without error; the stubs allow None).
_offset_of = cast("Callable[[Message], int]", Message.offset)
_value_of = Message.value
_key_of = Message.key
_timestamp_of = cast("Callable[[Message], tuple[int, int]]", Message.timestamp)


@dataclass(slots=True, eq=False)
class FetchedRecords:
    """Messages of one partition fetched together, in offset order, as columns. Never changed once made (not frozen
    only because a frozen dataclass takes six times as long to make, once per chunk on the fetch path)."""

    topic: str
    partition: int
    offsets: Sequence[int]
    values: Sequence[bytes | None]
    keys: Sequence[bytes | None]
    sources: Sequence[Message]  # librdkafka's messages, read only for their timestamps (see the module docstring)
    value_bytes: int

    @property
    def timestamps(self) -> list[tuple[int, int]]:
        """(type, milliseconds) of each record, as confluent-kafka's ``Message.timestamp()``; made at each call."""
        return list(map(_timestamp_of, self.sources))

    @staticmethod
    def of(messages: Sequence[Message], topic: str, partition: int, value_bytes: int | None = None) -> FetchedRecords:
        """The records of librdkafka's messages (without error) of one partition; ``value_bytes`` when the caller
        summed their ``len()`` already."""
        if not messages:
            return FetchedRecords(topic, partition, (), (), (), (), 0)
        if value_bytes is None:
            value_bytes = sum(map(len, messages))
        return FetchedRecords(topic, partition, list(map(_offset_of, messages)), list(map(_value_of, messages)),
                              list(map(_key_of, messages)), messages, value_bytes)

    def __len__(self) -> int:
        return len(self.offsets)

    def since(self, offset: int) -> FetchedRecords:
        """The records from ``offset`` on."""
        return self.slice(bisect_left(self.offsets, offset), len(self.offsets))

    def slice(self, start: int, stop: int) -> FetchedRecords:
        """The records from index ``start`` to ``stop`` (excluded)."""
        if start == 0 and stop >= len(self.offsets):
            return self
        values = self.values[start:stop]
        return FetchedRecords(self.topic, self.partition, self.offsets[start:stop], values, self.keys[start:stop],
                              self.sources[start:stop], sum(map(len, filter(None, values))))

    def rows(self, offsets: Iterator[int]) -> Iterator[tuple[Any, ...]]:
        """One tuple per record, in MessageAndMetadata's field order, pulled from ``offsets`` (an iterator over
        :attr:`offsets`, which the caller keeps to know how far the rows went)."""
        return zip(offsets, iter(self.values), iter(self.keys), repeat(self.topic), repeat(self.partition),
                   iter(self.sources), strict=False)


class MessageAndMetadata(tuple[Any, ...]):
    """A message as the application sees it: ``topic``, ``partition``, ``offset``, ``key``, ``message`` (the key and
    value as the stream's decoders make them), ``raw_key``, ``raw_message``, ``timestamp``, ``timestamp_type``,
    ``key_decoder``, ``value_decoder``.

    A tuple underneath (offset, value, key, topic, partition, librdkafka's message), its fields read by C accessors
    (the timestamp is read from the message when asked for). ``key`` and
    ``message`` run the stream's decoders each time they are read, so a decoder failure surfaces there and does not
    break the iteration (as in Kafka). Each stream has its own subclass, which carries its decoders
    (:func:`message_class`).
    """

    __slots__ = ()

    if TYPE_CHECKING:
        offset: int
        raw_message: bytes | None
        raw_key: bytes | None
        topic: str
        partition: int
        _key_decoder: Decoder
        _value_decoder: Decoder
    else:
        offset = _field(0, "The message's offset in its partition.")
        raw_message = _field(1, "The value as fetched (bytes, or None for a null value).")
        raw_key = _field(2, "The key as fetched (bytes, or None).")
        topic = _field(3, "The topic.")
        partition = _field(4, "The partition.")
        _key_decoder = staticmethod(identity_decoder)
        _value_decoder = staticmethod(identity_decoder)

    @property
    def timestamp(self) -> int:
        """Milliseconds since the epoch, as the broker gave it."""
        return _timestamp_of(self[5])[1]

    @property
    def timestamp_type(self) -> int:
        """0 none, 1 create time, 2 log append time (confluent-kafka's ``TIMESTAMP_*``)."""
        return _timestamp_of(self[5])[0]

    @property
    def key_decoder(self) -> Decoder:
        return self._key_decoder

    @property
    def value_decoder(self) -> Decoder:
        return self._value_decoder

    @property
    def key(self) -> Any:
        return self._key_decoder(self[2])

    @property
    def message(self) -> Any:
        return self._value_decoder(self[1])

    def __eq__(self, other: object) -> bool:
        """Equal when the same message (as Kafka's case class): librdkafka's message inside is compared by its
        timestamp, not by identity, so a message fetched twice, or pickled and back, is equal to itself."""
        if not isinstance(other, MessageAndMetadata):
            return NotImplemented
        return self[:5] == other[:5] and _timestamp_of(self[5]) == _timestamp_of(other[5])

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self[:5])

    def __repr__(self) -> str:
        return (f"MessageAndMetadata(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, "
                f"key={self.raw_key!r}, message={self.raw_message!r})")


class _UndecodedMessageAndMetadata(MessageAndMetadata):
    """The messages of a stream whose decoders are both the identity (the default): ``key`` and ``message`` are the
    C accessors of the raw fields, one Python call less per read (an identity decoder cannot fail)."""

    __slots__ = ()

    if not TYPE_CHECKING:
        key = MessageAndMetadata.raw_key
        message = MessageAndMetadata.raw_message


def message_class(key_decoder: Decoder, value_decoder: Decoder) -> type[MessageAndMetadata]:
    """The MessageAndMetadata subclass a stream with these decoders hands out."""
    if key_decoder is identity_decoder and value_decoder is identity_decoder:
        return _UndecodedMessageAndMetadata
    return type("MessageAndMetadata", (MessageAndMetadata,), {
        "__slots__": (), "__module__": __name__, "__qualname__": "MessageAndMetadata",
        "_key_decoder": staticmethod(key_decoder), "_value_decoder": staticmethod(value_decoder),
    })

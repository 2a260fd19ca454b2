"""MessageAndMetadata, and the fetched records streams make them from.

Why they are shaped as they are: the cost of a consumer written in Python is not in fetching but in what is done per
message, in Python's own calls, and in C passes over every message too (each one reads a field of hundreds of librdkafka
``Message`` objects spread over memory). So a fetched chunk is :class:`FetchedRecords`: librdkafka's ``Message``
objects of one partition as ``consume()`` returned them (the very list when the batch was all of one partition), and
nothing is read from them until asked for. The fetcher passes over a batch only for what it must know (errors,
partitions, value sizes); the first and last offsets are read at the edges.

What the application gets is made at the moment the stream hands it out, by C calls: a MessageAndMetadata is a tuple
of the value and the ``Message`` (a row of :func:`rows`, made into the stream's tuple subclass), its other fields read
from the message when asked for. A record batch's columns (offsets, values, keys) are made, once each, by one C pass
over its messages when first read, so a reader that wants only the values pays only for those.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
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

# Unbound C methods, mapped over a whole run or called on one message (offset, topic and partition are set on every
# message without error; the stubs allow None).
offset_of = cast("Callable[[Message], int]", Message.offset)
_value_of = Message.value
_key_of = Message.key
topic_of = cast("Callable[[Message], str]", Message.topic)
partition_of = cast("Callable[[Message], int]", Message.partition)
_timestamp_of = cast("Callable[[Message], tuple[int, int]]", Message.timestamp)


def rows(values: Iterator[Message], messages: Iterator[Message]) -> Iterator[tuple[bytes | None, Message]]:
    """(value, message) rows, what a MessageAndMetadata holds, from two iterators over the same messages in step:
    the caller keeps ``messages`` to know how far the rows went (and moves both when it skips some)."""
    return zip(map(_value_of, values), messages, strict=False)  # the messages end first after a rebalance's drop


def row_of(message: Message) -> tuple[bytes | None, Message]:
    """One message's row, as :func:`rows` makes them."""
    return _value_of(message), message


def _column(slot: str, read: Callable[[Message], Any], doc: str) -> property:
    """A column of :class:`FetchedRecords`: made from its messages by one C pass when first read, kept in ``slot``."""

    def column(records: FetchedRecords) -> list[Any]:
        made = getattr(records, slot)
        if made is None:
            made = list(map(read, records.sources))
            setattr(records, slot, made)
        return made

    return property(column, doc=doc)


class FetchedRecords:
    """Messages of one partition fetched together, in offset order: librdkafka's ``Message`` objects (``sources``)
    and, made from them by one C pass each when first read, the columns ``offsets``, ``values`` and ``keys``. Never
    changed once made."""

    __slots__ = ("topic", "partition", "sources", "value_bytes", "_offsets", "_values", "_keys")

    def __init__(self, topic: str, partition: int, sources: Sequence[Message], value_bytes: int) -> None:
        self.topic = topic
        self.partition = partition
        self.sources = sources
        self.value_bytes = value_bytes
        self._offsets: list[int] | None = None
        self._values: list[bytes | None] | None = None
        self._keys: list[bytes | None] | None = None

    if TYPE_CHECKING:
        offsets: list[int]
        values: list[bytes | None]
        keys: list[bytes | None]
    else:
        offsets = _column("_offsets", offset_of, "Each record's offset.")
        values = _column("_values", _value_of, "Each record's value as fetched (bytes, or None for a null value).")
        keys = _column("_keys", _key_of, "Each record's key as fetched (bytes, or None).")

    @property
    def timestamps(self) -> list[tuple[int, int]]:
        """(type, milliseconds) of each record, as confluent-kafka's ``Message.timestamp()``; made at each call."""
        return list(map(_timestamp_of, self.sources))

    @property
    def first_offset(self) -> int:
        """The first record's offset (there must be one)."""
        return offset_of(self.sources[0])

    @property
    def last_offset(self) -> int:
        """The last record's offset (there must be one)."""
        return offset_of(self.sources[-1])

    @staticmethod
    def of(messages: Sequence[Message], topic: str, partition: int, value_bytes: int | None = None) -> FetchedRecords:
        """The records of librdkafka's messages (without error) of one partition, in offset order; ``value_bytes``
        when the caller summed their ``len()`` already. The sequence is kept as it is, not copied."""
        if value_bytes is None:
            value_bytes = sum(map(len, messages))
        return FetchedRecords(topic, partition, messages, value_bytes)

    def __len__(self) -> int:
        return len(self.sources)

    def since(self, offset: int) -> FetchedRecords:
        """The records from ``offset`` on."""
        return self.slice(bisect_left(self.sources, offset, key=offset_of), len(self.sources))

    def slice(self, start: int, stop: int) -> FetchedRecords:
        """The records from index ``start`` to ``stop`` (excluded)."""
        if start == 0 and stop >= len(self.sources):
            return self
        sources = self.sources[start:stop]
        return FetchedRecords(self.topic, self.partition, sources, sum(map(len, sources)))

    def __repr__(self) -> str:
        return (f"FetchedRecords(topic={self.topic!r}, partition={self.partition}, offsets={self.offsets!r}, "
                f"values={self.values!r}, keys={self.keys!r}, value_bytes={self.value_bytes})")


class MessageAndMetadata(tuple[bytes | None, Message]):
    """A message as the application sees it: ``topic``, ``partition``, ``offset``, ``key``, ``message`` (the key and
    value as the stream's decoders make them), ``raw_key``, ``raw_message``, ``timestamp``, ``timestamp_type``,
    ``key_decoder``, ``value_decoder``.

    A tuple underneath, of the value and librdkafka's ``Message`` (made by C calls per message, see the module
    docstring): the value, the field nearly every reader reads, by a C accessor; every other field is read from the
    message when asked for. ``key`` and ``message`` run the stream's decoders each time they are
    read, so a decoder failure surfaces there and does not break the iteration (as in Kafka). Each stream has its own
    subclass, which carries its decoders (:func:`message_class`).
    """

    __slots__ = ()

    if not TYPE_CHECKING:
        raw_message = _field(0, "The value as fetched (bytes, or None for a null value).")
        _key_decoder = staticmethod(identity_decoder)
        _value_decoder = staticmethod(identity_decoder)
    else:
        raw_message: bytes | None
        _key_decoder: Decoder
        _value_decoder: Decoder

    @property
    def offset(self) -> int:
        """The message's offset in its partition."""
        return offset_of(self[1])

    @property
    def raw_key(self) -> bytes | None:
        """The key as fetched (bytes, or None)."""
        return _key_of(self[1])

    @property
    def topic(self) -> str:
        """The topic."""
        return topic_of(self[1])

    @property
    def partition(self) -> int:
        """The partition."""
        return partition_of(self[1])

    @property
    def timestamp(self) -> int:
        """Milliseconds since the epoch, as the broker gave it."""
        return _timestamp_of(self[1])[1]

    @property
    def timestamp_type(self) -> int:
        """0 none, 1 create time, 2 log append time (confluent-kafka's ``TIMESTAMP_*``)."""
        return _timestamp_of(self[1])[0]

    @property
    def key_decoder(self) -> Decoder:
        return self._key_decoder

    @property
    def value_decoder(self) -> Decoder:
        return self._value_decoder

    @property
    def key(self) -> Any:
        return self._key_decoder(_key_of(self[1]))

    @property
    def message(self) -> Any:
        return self._value_decoder(self[0])

    def _identity(self) -> tuple[Any, ...]:
        """What tells one message from another (as Kafka's case class, minus the decoders): offset, value, key,
        topic, partition, then the timestamp."""
        source = self[1]
        return (offset_of(source), _value_of(source), _key_of(source), topic_of(source), partition_of(source),
                _timestamp_of(source))

    def __eq__(self, other: object) -> bool:
        """Equal when the same message: librdkafka's message inside is compared by its fields, not by identity, so a
        message fetched twice, or pickled and back, is equal to itself."""
        if not isinstance(other, MessageAndMetadata):
            return NotImplemented
        return self._identity() == other._identity()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._identity()[:5])

    # Ordered as a tuple of (offset, value, key, topic, partition): sorted() puts a partition's messages in offset
    # order, whatever the tuple underneath holds.
    def _compare(self, other: object, order: Callable[[Any, Any], bool]) -> bool:
        if not isinstance(other, MessageAndMetadata):
            return NotImplemented
        return order(self._identity()[:5], other._identity()[:5])

    def __lt__(self, other: object) -> bool:
        return self._compare(other, operator.lt)

    def __le__(self, other: object) -> bool:
        return self._compare(other, operator.le)

    def __gt__(self, other: object) -> bool:
        return self._compare(other, operator.gt)

    def __ge__(self, other: object) -> bool:
        return self._compare(other, operator.ge)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its stream's decoders (by reference: module-level functions pickle, a lambda does not), so
        that a message of a stream with decoders of its own is read back by a class with the same decoders."""
        return _restore, (self[0], self[1], self._key_decoder, self._value_decoder)

    def __repr__(self) -> str:
        return (f"MessageAndMetadata(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, "
                f"key={self.raw_key!r}, message={self.raw_message!r})")


class _UndecodedMessageAndMetadata(MessageAndMetadata):
    """The messages of a stream whose decoders are both the identity (the default): ``key`` and ``message`` read the
    raw fields without a decoder call (an identity decoder cannot fail); ``message`` is the value's C accessor."""

    __slots__ = ()

    @property
    def key(self) -> Any:
        return _key_of(self[1])

    if not TYPE_CHECKING:
        message = MessageAndMetadata.raw_message


def _restore(value: bytes | None, message: Message, key_decoder: Decoder,
             value_decoder: Decoder) -> MessageAndMetadata:
    """A pickled MessageAndMetadata read back (see ``__reduce__``)."""
    key = (key_decoder, value_decoder)
    cls = _RESTORED.get(key)
    if cls is None:
        cls = _RESTORED[key] = message_class(key_decoder, value_decoder)
    return cls((value, message))


_RESTORED: dict[tuple[Decoder, Decoder], type[MessageAndMetadata]] = {}
"""The classes of messages read back from pickles, one per pair of decoders."""


def message_class(key_decoder: Decoder, value_decoder: Decoder) -> type[MessageAndMetadata]:
    """The MessageAndMetadata subclass a stream with these decoders hands out."""
    if key_decoder is identity_decoder and value_decoder is identity_decoder:
        return _UndecodedMessageAndMetadata
    return type("MessageAndMetadata", (MessageAndMetadata,), {
        "__slots__": (), "__module__": __name__, "__qualname__": "MessageAndMetadata",
        "_key_decoder": staticmethod(key_decoder), "_value_decoder": staticmethod(value_decoder),
    })

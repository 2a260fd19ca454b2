"""MessageAndMetadata, and the fetched records streams make them from.

Why they are shaped as they are: the cost of a consumer written in Python is not in fetching but in what is done per
message, in Python's own calls, and in C passes over every message too (each one reads a field of hundreds of librdkafka
``Message`` objects spread over memory). So a fetched chunk is :class:`FetchedRecords`: librdkafka's ``Message``
objects of one partition as ``consume()`` returned them (the very list when the batch was all of one partition), and
nothing is read from them until asked for. The fetcher passes over a batch only for what it must know (errors,
partitions, value sizes); the first and last offsets are read at the edges.

What the application gets is made at the moment the stream hands it out, by C calls (:func:`messages`): a
MessageAndMetadata holds the value and the ``Message``, its other fields read from the message when asked for. It is a
``msgspec.Struct``: a type written in C, which a ``map`` makes by one vectorcall per message, with no arguments tuple.
Made and freed, it costs about a third of what a class defined in Python costs (a tuple subclass included), which is
most of what a stream adds per message to librdkafka's own binding.

The messages of a stream with the default (identity) decoders also stay out of the garbage collector: they refer to
the value's bytes, librdkafka's ``Message`` and their class, a module-level class whose decoders are module-level
functions, none of which refers to anything an application makes (short of putting a message into the headers list its
own librdkafka message keeps), so such a message cannot be part of a cycle and needs no collector to be freed. A
stream with decoders of its own gets a class that holds them, and a decoder may refer back to what keeps the messages
(a bound method of the object that queues them): its messages are tracked by the collector, as any Python object, so
such a cycle is collected.

A record batch's columns (offsets, values, keys) are made, once each, by one C pass over its messages when first read,
so a reader that wants only the values pays only for those.
"""

from __future__ import annotations

import operator
import types
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import msgspec
from confluent_kafka import Message

from zkconsumer.config import identity_decoder

Decoder = Callable[[bytes | None], Any]

# Unbound C methods, mapped over a whole run or called on one message (offset, topic and partition are set on every
# message without error; the stubs allow None).
offset_of = cast("Callable[[Message], int]", Message.offset)
_value_of = Message.value
_key_of = Message.key
topic_of = cast("Callable[[Message], str]", Message.topic)
partition_of = cast("Callable[[Message], int]", Message.partition)
_timestamp_of = cast("Callable[[Message], tuple[int, int]]", Message.timestamp)


def messages(make: type[MessageAndMetadata], values: Iterator[Message],
             sources: Iterator[Message]) -> Iterator[MessageAndMetadata]:
    """MessageAndMetadata of class ``make``, from two iterators over the same librdkafka messages in step (one for
    the values, one for the messages): the caller keeps ``sources`` to know how far it went, and moves both when it
    skips some. ``map`` pulls the value first, so once ``sources`` is emptied (a rebalance's drop) it ends."""
    return map(make, map(_value_of, values), sources)


def message_of(make: type[MessageAndMetadata], source: Message) -> MessageAndMetadata:
    """One message's MessageAndMetadata, as :func:`messages` makes them."""
    return make(_value_of(source), source)


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


class MessageAndMetadata(msgspec.Struct, frozen=True, gc=False, weakref=False):
    """A message as the application sees it: ``topic``, ``partition``, ``offset``, ``key``, ``message`` (the key and
    value as the stream's decoders make them), ``raw_key``, ``raw_message``, ``timestamp``, ``timestamp_type``,
    ``key_decoder``, ``value_decoder``. Immutable, like Kafka's case class.

    Underneath, the value and librdkafka's ``Message`` (made by one C call per message, see the module docstring):
    the value, the field nearly every reader reads, is a C attribute; every other field is read from the message when
    asked for. ``key`` and ``message`` run the stream's decoders each time they are read, so a decoder failure surfaces
    there and does not break the iteration (as in Kafka). Each stream has its own subclass, which carries its decoders
    (:func:`message_class`).
    """

    raw_message: bytes | None
    """The value as fetched (bytes, or None for a null value)."""
    _source: Message

    # Not annotated, so class attributes rather than fields: each stream's subclass sets its own.
    _key_decoder = staticmethod(identity_decoder)
    _value_decoder = staticmethod(identity_decoder)

    @property
    def offset(self) -> int:
        """The message's offset in its partition."""
        return offset_of(self._source)

    @property
    def raw_key(self) -> bytes | None:
        """The key as fetched (bytes, or None)."""
        return _key_of(self._source)

    @property
    def topic(self) -> str:
        """The topic."""
        return topic_of(self._source)

    @property
    def partition(self) -> int:
        """The partition."""
        return partition_of(self._source)

    @property
    def timestamp(self) -> int:
        """Milliseconds since the epoch, as the broker gave it."""
        return _timestamp_of(self._source)[1]

    @property
    def timestamp_type(self) -> int:
        """0 none, 1 create time, 2 log append time (confluent-kafka's ``TIMESTAMP_*``)."""
        return _timestamp_of(self._source)[0]

    @property
    def key_decoder(self) -> Decoder:
        return self._key_decoder

    @property
    def value_decoder(self) -> Decoder:
        return self._value_decoder

    @property
    def key(self) -> Any:
        return self._key_decoder(_key_of(self._source))

    @property
    def message(self) -> Any:
        return self._value_decoder(self.raw_message)

    def _identity(self) -> tuple[Any, ...]:
        """What tells one message from another (as Kafka's case class, minus the decoders): offset, value, key,
        topic, partition, then the timestamp."""
        source = self._source
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
    # order.
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
        return _restore, (self.raw_message, self._source, self._key_decoder, self._value_decoder)

    @property
    def __rich_repr__(self) -> Any:
        """Absent (reading it raises AttributeError), so that rich's pretty printer (a REPL, a traceback's locals)
        shows :meth:`__repr__` rather than msgspec's own listing of the struct's fields, the private ``Message`` among
        them."""
        raise AttributeError("__rich_repr__")

    def __repr__(self) -> str:
        return (f"MessageAndMetadata(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, "
                f"key={self.raw_key!r}, message={self.raw_message!r})")


class _UndecodedMessageAndMetadata(MessageAndMetadata, frozen=True):
    """The messages of a stream whose decoders are both the identity (the default): ``key`` and ``message`` read the
    raw fields without a decoder call (an identity decoder cannot fail); ``message`` is the value's C accessor."""

    @property
    def key(self) -> Any:
        return _key_of(self._source)

    if not TYPE_CHECKING:
        message = MessageAndMetadata.raw_message  # the field's own C accessor, under the name every reader uses


def _restore(value: bytes | None, message: Message, key_decoder: Decoder,
             value_decoder: Decoder) -> MessageAndMetadata:
    """A pickled MessageAndMetadata read back (see ``__reduce__``)."""
    key = (key_decoder, value_decoder)
    cls = _RESTORED.get(key)
    if cls is None:
        cls = _RESTORED[key] = message_class(key_decoder, value_decoder)
    return cls(value, message)


_RESTORED: dict[tuple[Decoder, Decoder], type[MessageAndMetadata]] = {}
"""The classes of messages read back from pickles, one per pair of decoders."""


def message_class(key_decoder: Decoder, value_decoder: Decoder) -> type[MessageAndMetadata]:
    """The MessageAndMetadata subclass a stream with these decoders hands out."""
    if key_decoder is identity_decoder and value_decoder is identity_decoder:
        return _UndecodedMessageAndMetadata
    namespace = {
        "__module__": __name__, "__qualname__": "MessageAndMetadata",
        "_key_decoder": staticmethod(key_decoder), "_value_decoder": staticmethod(value_decoder),
    }
    # gc=True: the class holds the decoders, which may refer back to what keeps the messages (module docstring).
    return types.new_class("MessageAndMetadata", (MessageAndMetadata,), {"gc": True},
                           lambda body: body.update(namespace))

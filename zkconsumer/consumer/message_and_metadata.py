"""MessageAndMetadata, and the fetched records streams make them from.

Why two shapes for one message: the cost of a consumer written in Python is not in fetching but in the objects made
per message, and in the cyclic garbage collector walking the ones that live a while. A fetched message waits in a
stream's queue for a while, so what waits there is a *fetched record*, a plain tuple of atoms (ints, bytes, a str),
which the collector stops tracking the first time it sees it and never walks again; librdkafka's ``Message`` objects
are dropped by the fetcher right after they were read, young. The application's MessageAndMetadata is made from the
record at the moment the stream hands it out, by a C call (a tuple subclass built from the record), and is as
short-lived as the application keeps it.

A fetched record is ``(offset, value, key, topic, partition, timestamp, timestamp_type)``
(:data:`FetchedRecord`); :func:`fetched_records` makes them from a run of librdkafka's messages of one partition in
one C-level pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from confluent_kafka import Message

from zkconsumer.config import identity_decoder

Decoder = Callable[[bytes | None], Any]

#: ``(offset, value, key, topic, partition, timestamp, timestamp_type)``; the timestamp type is confluent-kafka's
#: (0 none, 1 create time, 2 log append time).
FetchedRecord = tuple[int, bytes | None, bytes | None, str, int, int, int]
OFFSET: Final = 0
VALUE: Final = 1

_offset_of = Message.offset
_value_of = Message.value
_key_of = Message.key
_timestamp_of = Message.timestamp


def fetched_records(messages: Sequence[Message], topic: str, partition: int) -> list[FetchedRecord]:
    """Records of librdkafka's messages (without error) of one partition, in their order."""
    if not messages:
        return []
    types, stamps = zip(*map(_timestamp_of, messages), strict=True)
    return list(zip(map(_offset_of, messages), map(_value_of, messages), map(_key_of, messages), repeat(topic),
                    repeat(partition), stamps, types, strict=False))


class MessageAndMetadata(tuple[Any, ...]):
    """A message as the application sees it: ``topic``, ``partition``, ``offset``, ``key``, ``message`` (the key and
    value as the stream's decoders make them), ``raw_key``, ``raw_message``, ``timestamp``, ``timestamp_type``,
    ``key_decoder``, ``value_decoder``.

    A tuple underneath (the :data:`FetchedRecord` it was made from), its fields read by C accessors. ``key`` and
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
        timestamp: int
        timestamp_type: int
        _key_decoder: Decoder
        _value_decoder: Decoder
    else:
        offset = property(itemgetter(0), doc="The message's offset in its partition.")
        raw_message = property(itemgetter(1), doc="The value as fetched (bytes, or None for a null value).")
        raw_key = property(itemgetter(2), doc="The key as fetched (bytes, or None).")
        topic = property(itemgetter(3))
        partition = property(itemgetter(4))
        timestamp = property(itemgetter(5), doc="Milliseconds since the epoch, as the broker gave it.")
        timestamp_type = property(itemgetter(6), doc="0 none, 1 create time, 2 log append time.")
        _key_decoder = staticmethod(identity_decoder)
        _value_decoder = staticmethod(identity_decoder)

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

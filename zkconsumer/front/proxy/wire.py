"""The Kafka wire format as the front reads and writes it: size-prefixed frames, request and response headers, and
the message bodies it parses, all through `kio <https://pypi.org/project/kio/>`_.

Why kio: its entities are generated from Kafka's own JSON message schemas (``clients/src/main/resources/common/
message``), one frozen dataclass per API, version and nested struct, with the flexible versions' compact encodings
and tagged fields, the request header's special cases (``client_id`` always a legacy string) and the responses'
header versions (ApiVersions always v0) as Kafka lays them out; it parses with a native reader, ships type
information (``py.typed``) and is kept in step with Kafka's schemas. So no encoder or decoder of a message body is
written here by hand: a body the front must understand is read into kio's entity, changed with
:func:`dataclasses.replace`, and written back by kio's writer.

Only what the front must read is parsed. A relayed request needs its API key, version and correlation id, the first
eight bytes of every request header version (read with kio's integer readers); the whole header is parsed for the
requests the front decodes (ApiVersions, the local APIs) and for Produce, whose ``acks`` are read (and an ``acks=0``
replaced, :mod:`zkconsumer.front.proxy.server` says why). A relayed response is never parsed unless it names brokers
(:mod:`zkconsumer.front.proxy.rewrite`).

Frames are at most ``socket.request.max.bytes`` (Kafka's default, 100 MiB) on the client's side; a size prefix that
is negative or larger is a malformed request, as Kafka's ``NetworkReceive`` treats it.
"""

from __future__ import annotations

import asyncio
import io
import struct
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from kio.index import load_request_schema, load_response_schema
from kio.schema.index import api_key_map, schema_name_map
from kio.schema.request_header.v1 import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2 import RequestHeader as RequestHeaderV2
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError
from kio.serial.readers import (
    read_compact_string_nullable,
    read_int16,
    read_int32,
    read_nullable_legacy_string,
)
from kio.serial.writers import write_int16
from kio.static.primitive import i16, i32

from zkconsumer.kafka.api_keys import API_VERSIONS

#: Kafka's ``socket.request.max.bytes`` default: the largest request a broker reads
MAX_REQUEST_BYTES = 104_857_600
#: ErrorCode.unsupported_version: an ApiVersions answer with it is laid out as version 0, whatever was asked
UNSUPPORTED_VERSION = 35
_SIZE = struct.Struct(">i")


class MalformedRequest(Exception):
    """A request the front cannot read: the connection is closed, as Kafka closes it (``InvalidRequestException``)."""


class MalformedResponse(Exception):
    """A broker's answer the front had to parse and could not."""


class AcksZeroFailed(Exception):
    """A Produce with ``acks=0`` failed: Kafka closes the connection, the one way such a client learns of it (and
    refreshes its metadata)."""


class TruncatedFrame(Exception):
    """The peer closed its side in the middle of a frame."""


@dataclass(frozen=True, slots=True)
class RequestHead:
    """What every request header starts with (versions 0 to 2 alike)."""

    api_key: int
    api_version: int
    correlation_id: int


# --- frames -------------------------------------------------------------------------------------------------------


async def read_frame(reader: asyncio.StreamReader, max_bytes: int = MAX_REQUEST_BYTES) -> bytes | None:
    """The next frame's bytes, without its size prefix; ``None`` when the peer closed between frames.

    :raises TruncatedFrame: the peer closed in the middle of a frame.
    :raises MalformedRequest: the size prefix is negative or above ``max_bytes``.
    """
    try:
        prefix = await reader.readexactly(4)
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise TruncatedFrame(f"closed after {len(exc.partial)} bytes of a size prefix") from None
        return None
    size = _SIZE.unpack(prefix)[0]
    if size < 0 or size > max_bytes:
        raise MalformedRequest(f"frame size {size} outside 0..{max_bytes}")
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise TruncatedFrame(f"closed after {len(exc.partial)} of {size} bytes") from None


def framed(body: bytes) -> bytes:
    """``body`` with its size prefix."""
    return _SIZE.pack(len(body)) + body


def frame_size(prefix: bytes) -> int:
    """The size a 4-byte prefix announces."""
    return cast(int, _SIZE.unpack(prefix)[0])


# --- request headers ------------------------------------------------------------------------------------------------


def read_request_head(frame: bytes) -> RequestHead:
    """The API key, version and correlation id of a request, checked as a broker checks them before reading on: an
    API key Kafka does not define, or a negative version, is a malformed request.

    :raises MalformedRequest:
    """
    try:
        api_key, _ = read_int16(frame, 0)
        api_version, _ = read_int16(frame, 2)
        correlation_id, _ = read_int32(frame, 4)
    except SerialError:
        raise MalformedRequest(f"a request of {len(frame)} bytes is shorter than a request header") from None
    if api_key not in api_key_map:
        raise MalformedRequest(f"unknown API key {api_key}")
    if api_version < 0:
        raise MalformedRequest(f"negative version {api_version} of API key {api_key}")
    return RequestHead(api_key, api_version, correlation_id)


def known_versions(api_key: int) -> range:
    """The versions of an API that kio can parse (an empty range for a key it does not know)."""
    versions = schema_name_map.get(api_key_map.get(api_key, ""), {})
    return range(min(versions), max(versions) + 1) if versions else range(0)


@cache
def request_header_type(api_key: int, api_version: int) -> type[RequestHeaderV1] | type[RequestHeaderV2]:
    """Header v2 for a flexible request version, else v1. A version below the ones kio knows is an old,
    non-flexible one (flexible versions are always the newest of an API); above them, as kio's newest."""
    versions = known_versions(api_key)
    if not versions or api_version < versions.start:
        return RequestHeaderV1
    schema = cast(Any, load_request_schema(api_key, min(api_version, versions.stop - 1)))
    return cast("type[RequestHeaderV1] | type[RequestHeaderV2]", schema.__header_schema__)


def header_size(head: RequestHead, frame: bytes) -> int:
    """Bytes of the whole request header (client id and tagged fields included): where the body starts.

    :raises MalformedRequest:
    """
    try:
        return entity_reader(request_header_type(head.api_key, head.api_version))(frame, 0)[1]
    except SerialError as exc:
        raise MalformedRequest(f"unreadable header of API key {head.api_key}: {exc}") from None


def produce_acks(head: RequestHead, frame: bytes) -> tuple[int, int]:
    """A Produce request's ``acks`` and their offset in the frame.

    :raises MalformedRequest: a Produce whose ``acks`` cannot be read.
    """
    offset = header_size(head, frame)
    try:
        if head.api_version >= 3:  # transactional_id comes first; compact from version 9 (flexible) on
            read_string = read_compact_string_nullable if head.api_version >= 9 else read_nullable_legacy_string
            offset += read_string(frame, offset)[1]
        acks, _ = read_int16(frame, offset)
    except SerialError:
        raise MalformedRequest("a Produce request too short to hold its acks") from None
    return acks, offset


def with_acks(frame: bytes, offset: int, acks: int) -> bytes:
    """The Produce request ``frame`` with ``acks`` in place of its own (at ``offset``, from :func:`produce_acks`)."""
    value = io.BytesIO()
    write_int16(value, i16(acks))
    return frame[:offset] + value.getvalue() + frame[offset + 2:]


# --- bodies -------------------------------------------------------------------------------------------------------


def decode_request(head: RequestHead, frame: bytes) -> Any:
    """The request's body as kio's entity of its API and version.

    :raises MalformedRequest: a version kio does not know, or a body that does not parse as that version.
    """
    if head.api_version not in known_versions(head.api_key):
        raise MalformedRequest(f"version {head.api_version} of API key {head.api_key} is not supported")
    schema = load_request_schema(head.api_key, head.api_version)
    offset = header_size(head, frame)
    try:
        body, size = entity_reader(schema)(frame, offset)
    except SerialError as exc:
        raise MalformedRequest(f"unreadable body of API key {head.api_key} v{head.api_version}: {exc}") from None
    if offset + size != len(frame):
        raise MalformedRequest(f"{len(frame) - offset - size} bytes after the body of API key {head.api_key}")
    return body


def encode_response(correlation_id: int, body: Any) -> bytes:
    """A framed response: the header version the body's schema names (ApiVersions: always v0), then the body."""
    out = io.BytesIO()
    header_type = type(body).__header_schema__
    entity_writer(header_type)(out, header_type(correlation_id=i32(correlation_id)))
    entity_writer(type(body))(out, body)
    return framed(out.getvalue())


def encode_request(body: Any, correlation_id: int, client_id: str | None) -> bytes:
    """A framed request, with the header version its schema names: what the front's probe and the tests send."""
    out = io.BytesIO()
    header_type = type(body).__header_schema__
    header = header_type(request_api_key=i16(body.__api_key__), request_api_version=i16(body.__version__),
                         correlation_id=i32(correlation_id), client_id=client_id)
    entity_writer(header_type)(out, header)
    entity_writer(type(body))(out, body)
    return framed(out.getvalue())


def response_correlation_id(frame: bytes) -> int:
    """The correlation id every response header starts with."""
    try:
        return read_int32(frame, 0)[0]
    except SerialError:
        raise MalformedResponse(f"a response of {len(frame)} bytes has no header") from None


def decode_response(api_key: int, api_version: int, frame: bytes) -> Any:
    """A response's body as kio's entity. An ApiVersions answer carrying UNSUPPORTED_VERSION is laid out as
    version 0 whatever the request's version (KIP-511), as Kafka's clients read it.

    :raises MalformedResponse:
    """
    try:
        schema = load_response_schema(api_key, api_version)
        header_type = cast(Any, schema).__header_schema__
        offset = entity_reader(header_type)(frame, 0)[1]
        if api_key == API_VERSIONS and read_int16(frame, offset)[0] == UNSUPPORTED_VERSION:
            schema = load_response_schema(api_key, 0)
        body, size = entity_reader(schema)(frame, offset)
    except (SerialError, KeyError, ValueError) as exc:
        raise MalformedResponse(f"unreadable answer of API key {api_key} v{api_version}: {exc}") from None
    if offset + size != len(frame):
        raise MalformedResponse(f"{len(frame) - offset - size} bytes after the answer of API key {api_key}")
    return body

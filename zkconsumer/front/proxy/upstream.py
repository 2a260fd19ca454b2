"""A client connection's own connection to the broker: the frames relayed on it, the answers copied back, and the
exchanges a local handler makes on it (:attr:`~zkconsumer.front.proxy.handlers.RequestContext.relay`).

One per client connection (:mod:`.server`), one for the group store's writes (:mod:`.group_store`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from zkconsumer.front.proxy.config import FrontConfig, parse_address
from zkconsumer.front.proxy.wire import (
    MalformedRequest,
    MalformedResponse,
    TruncatedFrame,
    decode_response,
    encode_request,
    frame_size,
    framed,
    read_frame,
    response_correlation_id,
)

#: how much of a relayed answer is copied at a time: large enough for few system calls, small enough that a big Fetch
#: answer is not held whole in memory
COPY_CHUNK = 1 << 20
#: no answer from the broker is larger (Fetch's own limit is what the client asks, at most 2 GiB in theory)
MAX_ANSWER_BYTES = (1 << 31) - 1


class BrokerLost(Exception):
    """The broker's connection closed or failed while a request was relayed."""


class ClientGone(Exception):
    """The client's connection closed or failed while the front answered."""


class Upstream:
    """A client connection's connection to the broker."""

    def __init__(self, address: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.address = address
        self.reader = reader
        self.writer = writer
        #: an exchange was given up before its answer came (its deadline passed): the answer may still arrive, so
        #: the connection is out of step and closed, and the client's connection with it once its answer is written
        self.abandoned = False

    def send(self, frame: bytes) -> None:
        self.writer.write(framed(frame))

    async def read_answer(self) -> bytes:
        try:
            answer = await read_frame(self.reader, MAX_ANSWER_BYTES)
        except (TruncatedFrame, ConnectionError, MalformedRequest) as exc:
            raise BrokerLost(str(exc) or type(exc).__name__) from None
        if answer is None:
            raise BrokerLost("the broker closed the connection")
        return answer

    async def exchange(self, body: Any, correlation_id: int, client_id: str | None) -> Any:
        """Send ``body`` (kio's request entity) and return the broker's answer as kio's entity: how a local API
        reaches the broker, on the connection that is otherwise idle while the client waits for that API's answer.
        Cancelled (a handler's deadline), the connection is :attr:`abandoned` and closed."""
        try:
            self.writer.write(encode_request(body, correlation_id, client_id))
            answer = await self.read_answer()
        except asyncio.CancelledError:
            self.abandoned = True
            self.writer.close()
            raise
        if response_correlation_id(answer) != correlation_id:
            raise MalformedResponse(f"an answer with correlation id {response_correlation_id(answer)} to request "
                                    f"{correlation_id}")
        return decode_response(body.__api_key__, body.__version__, answer)

    async def copy_answer(self, client: asyncio.StreamWriter, correlation_id: int) -> None:
        """The next answer, copied to ``client`` as it arrives, once its correlation id is found to be
        ``correlation_id`` (a client is never handed the answer to another request)."""
        try:
            start = await self.reader.readexactly(8)  # the size prefix and the correlation id
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise BrokerLost(_closed(exc)) from None
        remaining = frame_size(start[:4]) - 4
        if remaining < 0:
            raise BrokerLost(f"an answer of size {remaining + 4}")
        if response_correlation_id(start[4:]) != correlation_id:
            raise MalformedResponse(f"an answer with correlation id {response_correlation_id(start[4:])} to request "
                                    f"{correlation_id}")
        write_to_client(client, start)
        while remaining:
            try:
                chunk = await self.reader.read(min(remaining, COPY_CHUNK))
            except ConnectionError as exc:
                raise BrokerLost(_closed(exc)) from None
            if not chunk:
                raise BrokerLost(f"the broker closed the connection with {remaining} bytes of an answer to come")
            remaining -= len(chunk)
            write_to_client(client, chunk)
            await drain_client(client)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


async def connect_upstream(config: FrontConfig) -> tuple[Upstream | None, list[str]]:
    """A connection to the first of the config's brokers that accepts one, or none and why, one line per broker."""
    errors = []
    for address in config.bootstrap:
        host, port = parse_address(address, "broker address")
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, limit=COPY_CHUNK),
                                                    config.connect_timeout)
        except (OSError, TimeoutError) as exc:
            errors.append(f"{address}: {type(exc).__name__}: {exc}".rstrip(": "))
            continue
        return Upstream(address, reader, writer), errors
    return None, errors


def _closed(exc: BaseException) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        return "the broker closed the connection"
    return f"{type(exc).__name__}: {exc}"


def write_to_client(client: asyncio.StreamWriter, data: bytes) -> None:
    if client.is_closing():
        raise ClientGone("closed")
    client.write(data)


async def drain_client(client: asyncio.StreamWriter) -> None:
    try:
        await client.drain()
    except ConnectionError as exc:
        raise ClientGone(str(exc)) from None




__all__ = ["COPY_CHUNK", "BrokerLost", "ClientGone", "Upstream", "connect_upstream", "drain_client", "write_to_client"]

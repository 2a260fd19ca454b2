"""One request, one answer, over a plain blocking socket: how the launcher knows the front is ready and how the tests
and the benchmark speak to the front and the broker with kio's entities."""

from __future__ import annotations

import socket
from itertools import count
from typing import Any

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode

from zkconsumer.front.proxy.config import parse_address
from zkconsumer.front.proxy.wire import decode_response, encode_request, frame_size, response_correlation_id

CLIENT_ID = "zkconsumer-front-client"
_correlation = count(1)


def exchange(address: str, request: Any, timeout: float = 5.0, client_id: str | None = CLIENT_ID) -> Any:
    """Send ``request`` (kio's entity) on a new connection to ``address`` and return the answer's entity.

    :raises OSError: no connection, or it closed before the answer was complete.
    """
    with socket.create_connection(parse_address(address), timeout=timeout) as sock:
        sock.settimeout(timeout)
        return exchange_on(sock, request, client_id)


def exchange_on(sock: socket.socket, request: Any, client_id: str | None = CLIENT_ID) -> Any:
    """:func:`exchange` on a connection the caller keeps."""
    correlation_id = next(_correlation) & 0x7FFFFFFF
    sock.sendall(encode_request(request, correlation_id, client_id))
    answer = read_answer(sock)
    if response_correlation_id(answer) != correlation_id:
        raise OSError(f"an answer to request {response_correlation_id(answer)}, not {correlation_id}")
    return decode_response(request.__api_key__, request.__version__, answer)


def read_answer(sock: socket.socket) -> bytes:
    """The next frame on ``sock``, without its size prefix. Read to the byte, never ahead: the next answer on the
    connection stays there for the next call."""
    return _read_exactly(sock, frame_size(_read_exactly(sock, 4)))


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray(size)
    view = memoryview(data)
    done = 0
    while done < size:
        received = sock.recv_into(view[done:])
        if received == 0:
            raise OSError(f"the connection closed after {done} of {size} bytes")
        done += received
    return bytes(data)


def api_versions_request() -> ApiVersionsRequest:
    return ApiVersionsRequest(client_software_name="zkconsumer-front", client_software_version="1")


def answers_api_versions(address: str, timeout: float = 1.0) -> bool:
    """Whether a Kafka-protocol server at ``address`` answers ApiVersions without an error."""
    try:
        return exchange(address, api_versions_request(), timeout).error_code == ErrorCode.none
    except OSError:
        return False

"""A group's coordinator and its join/sync view, asked as Kafka 0.10's own tools asked: FindCoordinator v0
(0.10's GroupCoordinatorRequest) and DescribeGroups v0, over a plain socket.

Why not confluent-kafka's admin client: librdkafka (2.10+) describes a group with ConsumerGroupDescribe (KIP-848)
whenever the broker advertises that API, and falls back to DescribeGroups only on an error; Tansu advertises it and
answers it with a view that has no members and a member id where the assignor's name belongs. DescribeGroups v0 is
answered alike by Kafka 0.10 and by today's brokers (KIP-896 kept FindCoordinator v0 and DescribeGroups v0), and
it is the broker-side equivalent of reading ``/consumers/<g>/ids`` and ``owners``.

The codecs (``encode_*`` / ``decode_*``) are pure; an answer that does not parse raises
:class:`MalformedAnswerError` naming the API and the byte where it broke. The two network calls
(:func:`find_coordinator`, :func:`describe_group`) wait at most ``timeout`` each; a broker that cannot be reached
raises :class:`~zkconsumer.errors.ServerUnavailableError`.

Members' metadata and assignments are decoded with the consumer protocol's version 0 layout (later versions only
append fields, which are ignored, as Kafka's own parser does); a member of another protocol type keeps them raw.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field
from itertools import count

from zkconsumer.errors import ServerUnavailableError, ZkConsumerError
from zkconsumer.kafka.api_keys import DESCRIBE_GROUPS, FIND_COORDINATOR
from zkconsumer.kafka.consumer_protocol import ProtocolInvalid, decode_assignment, decode_subscription
from zkconsumer.kafka.metadata import BrokerMeta
from zkconsumer.types import TopicPartition

CONSUMER_PROTOCOL = "consumer"

#: The error codes these two APIs answer, by their Kafka 0.10 names.
ERROR_NAMES = {
    0: "NONE",
    14: "GROUP_LOAD_IN_PROGRESS",
    15: "GROUP_COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR_FOR_GROUP",
    24: "INVALID_GROUP_ID",
    30: "GROUP_AUTHORIZATION_FAILED",
    69: "GROUP_ID_NOT_FOUND",
}
#: Errors after which asking again, a little later, can succeed (the offsets topic is being created or loaded).
RETRIABLE = frozenset({14, 15, 16})

_correlation = count(1)


class MalformedAnswerError(ZkConsumerError):
    """A broker's answer that does not parse as the API's response."""


class CoordinatorError(ZkConsumerError):
    """The broker answered with an error code instead of a coordinator or a group."""

    def __init__(self, what: str, code: int) -> None:
        self.code = code
        super().__init__(f"{what}: the broker answered {error_name(code)} ({code})")


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"error {code}")


#: The broker that coordinates the group (and leads its offsets partition): a broker as the protocol names it.
Coordinator = BrokerMeta


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    client_id: str
    client_host: str
    #: consumer protocol: the topics it subscribes to; ``None`` when the metadata is empty or not decodable
    subscription: tuple[str, ...] | None = None
    #: consumer protocol: the partitions the leader assigned it; ``None`` when the broker gave no assignment
    assignment: tuple[TopicPartition, ...] | None = None


@dataclass(frozen=True)
class GroupDescription:
    """DescribeGroups' answer for one group: ``state`` is the coordinator's (``Empty``, ``PreparingRebalance``,
    ``AwaitingSync``, ``Stable``, ``Dead``); ``protocol`` the assignor the group agreed on (empty unless Stable)."""

    group: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[GroupMember, ...] = field(default_factory=tuple)


# --- codecs (pure) --------------------------------------------------------------------------------------


def _string(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack(">h", len(data)) + data


def encode_request(api_key: int, version: int, correlation_id: int, client_id: str, body: bytes) -> bytes:
    """A size-prefixed request with header v1 (api key, version, correlation id, client id)."""
    payload = struct.pack(">hhi", api_key, version, correlation_id) + _string(client_id) + body
    return struct.pack(">i", len(payload)) + payload


def encode_find_coordinator(group: str) -> bytes:
    return _string(group)


def encode_describe_groups(groups: list[str]) -> bytes:
    return struct.pack(">i", len(groups)) + b"".join(_string(g) for g in groups)


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.pos, self.what = data, 0, what

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise MalformedAnswerError(
                f"{self.what}: the answer ends at byte {len(self.data)}, {n} more expected at byte {self.pos}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def string(self) -> str:
        n = self.int16()
        if n == -1:
            return ""
        raw = self._take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedAnswerError(f"{self.what}: a string at byte {self.pos - n} is not UTF-8") from None

    def bytes_(self) -> bytes:
        n = self.int32()
        return b"" if n == -1 else self._take(n)

    def array_length(self) -> int:
        n = self.int32()
        if n < -1 or n > len(self.data):
            raise MalformedAnswerError(f"{self.what}: an array of {n} elements at byte {self.pos - 4}")
        return max(n, 0)


def decode_find_coordinator(data: bytes) -> Coordinator | int:
    """The coordinator, or the error code the broker answered."""
    reader = _Reader(data, "FindCoordinator answer")
    code, node_id, host, port = reader.int16(), reader.int32(), reader.string(), reader.int32()
    if code != 0:
        return code
    return Coordinator(node_id, host, port)


def decode_describe_groups(data: bytes) -> list[GroupDescription | tuple[str, int]]:
    """Each group's description, or ``(group, error code)`` for a group the broker answered an error for."""
    reader = _Reader(data, "DescribeGroups answer")
    groups: list[GroupDescription | tuple[str, int]] = []
    for _ in range(reader.array_length()):
        code, group = reader.int16(), reader.string()
        state, protocol_type, protocol = reader.string(), reader.string(), reader.string()
        members = []
        for _ in range(reader.array_length()):
            member_id, client_id, client_host = reader.string(), reader.string(), reader.string()
            metadata, assignment = reader.bytes_(), reader.bytes_()
            subscription: tuple[str, ...] | None = None
            assigned: tuple[TopicPartition, ...] | None = None
            if protocol_type == CONSUMER_PROTOCOL:
                try:
                    subscription = (tuple(sorted(decode_subscription(metadata, owned=False).topics)) if metadata
                                    else None)
                    assigned = tuple(sorted(decode_assignment(assignment))) if assignment else None
                except ProtocolInvalid as exc:
                    raise MalformedAnswerError(f"DescribeGroups answer: member {member_id} of {group}: {exc}") from None
            members.append(GroupMember(member_id, client_id, client_host, subscription, assigned))
        if code != 0:
            groups.append((group, code))
        else:
            groups.append(GroupDescription(group, state, protocol_type, protocol, tuple(members)))
    return groups


# --- the network ----------------------------------------------------------------------------------------


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.strip().rpartition(":")
    if not host or not port.isdigit():
        raise ServerUnavailableError(f"broker address {address!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def _exchange(address: str, api_key: int, body: bytes, timeout: float, client_id: str) -> bytes:
    correlation_id = next(_correlation) & 0x7FFFFFFF
    request = encode_request(api_key, 0, correlation_id, client_id, body)
    try:
        with socket.create_connection(_split(address), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(request)
            size = struct.unpack(">i", _read(sock, 4))[0]
            answer = _read(sock, size)
    except (OSError, struct.error) as exc:
        raise ServerUnavailableError(f"broker {address} did not answer ({exc or type(exc).__name__})") from None
    if len(answer) < 4 or struct.unpack(">i", answer[:4])[0] != correlation_id:
        raise MalformedAnswerError(f"broker {address} answered another request than the one sent")
    return answer[4:]


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise OSError("the broker closed the connection")
        data += chunk
    return data


def find_coordinator(bootstrap: str, group: str, timeout: float, client_id: str = "zkconsumer") -> Coordinator:
    """Ask the brokers of ``bootstrap`` (comma-separated, in order) which broker coordinates ``group``; a
    retriable answer is asked again every 200 ms until ``timeout``."""
    deadline = time.monotonic() + timeout
    problems: list[str] = []
    while True:
        retriable_code: int | None = None
        for address in [a for a in bootstrap.split(",") if a.strip()]:
            remaining = max(deadline - time.monotonic(), 0.1)
            try:
                answer = decode_find_coordinator(
                    _exchange(address, FIND_COORDINATOR, encode_find_coordinator(group), remaining, client_id))
            except ServerUnavailableError as exc:
                problems.append(str(exc))
                continue
            if isinstance(answer, Coordinator):
                return answer
            if answer not in RETRIABLE:
                raise CoordinatorError(f"FindCoordinator for group {group} at {address}", answer)
            retriable_code = answer
        if time.monotonic() + 0.2 >= deadline:
            if retriable_code is not None:
                raise CoordinatorError(f"FindCoordinator for group {group} (still, after {timeout:g} s)",
                                       retriable_code)
            raise ServerUnavailableError(problems[-1] if problems else f"no broker in {bootstrap!r}")
        time.sleep(0.2)


def describe_group(coordinator: Coordinator, group: str, timeout: float,
                   client_id: str = "zkconsumer") -> GroupDescription:
    answer = decode_describe_groups(
        _exchange(coordinator.address, DESCRIBE_GROUPS, encode_describe_groups([group]), timeout, client_id))
    for entry in answer:
        if isinstance(entry, GroupDescription) and entry.group == group:
            return entry
        if isinstance(entry, tuple) and entry[0] == group:
            raise CoordinatorError(f"DescribeGroups for group {group} at broker {coordinator.id}", entry[1])
    raise MalformedAnswerError(f"DescribeGroups answer of broker {coordinator.id} does not mention group {group}")

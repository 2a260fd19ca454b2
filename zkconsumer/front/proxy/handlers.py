"""The front's own APIs: a table from API key to the local handler that answers it instead of the broker.

A :class:`LocalApi` names the versions it answers and an ``async`` handler that receives kio's request entity and
returns kio's response entity of the same API and version. The server decodes the request, awaits the handler and
writes the answer in the connection's order: a handler may take its time (JoinGroup long-polls until its round
completes, SyncGroup waits for the leader's assignment) and the connection stays muted meanwhile, as Kafka mutes a
channel until its response is sent. Other connections go on.

The front's group coordinators plug in here (:mod:`.group_apis`, whose ``VERSIONS`` lists the keys and versions
they answer). ApiVersions advertises each local API with its own range (:mod:`.api_versions`). A handler that needs
the broker (offsets are kept there) sends kio's request entities on the client connection's own broker connection
through :attr:`RequestContext.relay`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from zkconsumer.front.proxy.wire import RequestHead, known_versions


@dataclass(frozen=True)
class RequestContext:
    """Who asked: the request's header and the client connection it came on."""

    head: RequestHead
    client_id: str | None
    #: the client's address, ``host:port``
    client: str
    #: the front's number for the connection, unique while it runs
    connection_id: int
    #: sends a request (kio's entity) to the broker on this connection's broker connection and returns the answer's
    #: entity; ``None`` where no broker is behind (a handler tested alone)
    relay: Callable[[Any], Awaitable[Any]] | None = None


class BrokerTimedOut(Exception):
    """A handler gave up waiting for the broker's answer to what it relayed: the client's connection is closed (after
    the handler's answer, if it gave one), its broker connection being out of step."""


#: ``(context, request) -> response``: kio's entities of one API and version
Handler = Callable[[RequestContext, Any], Awaitable[Any]]


@dataclass(frozen=True)
class LocalApi:
    """An API the front answers itself, in versions ``min_version`` to ``max_version``."""

    api_key: int
    min_version: int
    max_version: int
    handle: Handler

    def __post_init__(self) -> None:
        parsed = known_versions(self.api_key)
        if not (parsed.start <= self.min_version <= self.max_version < parsed.stop):
            raise ValueError(f"versions {self.min_version}..{self.max_version} of API key {self.api_key} are not "
                             f"all parsed by kio ({parsed.start}..{parsed.stop - 1})")


LocalApis = Mapping[int, LocalApi]


def local_table(apis: Iterable[LocalApi]) -> dict[int, LocalApi]:
    """The table the server reads, one handler per API key."""
    table: dict[int, LocalApi] = {}
    for api in apis:
        if api.api_key in table:
            raise ValueError(f"two handlers for API key {api.api_key}")
        table[api.api_key] = api
    return table


def local_ranges(table: LocalApis) -> dict[int, tuple[int, int]]:
    """What ApiVersions advertises for the front's own APIs."""
    return {key: (api.min_version, api.max_version) for key, api in table.items()}


class OldVersions(Protocol):
    """The versions of APIs answered from the raw frame, before the local table: the old ones ZooKeeper-era clients
    speak, which kio does not parse (:class:`zkconsumer.front.legacy.legacy_versions.LegacyVersions`)."""

    @property
    def versions(self) -> Mapping[int, range]:
        """The versions answered, by API key."""

    def answers(self, head: RequestHead) -> bool:
        """Whether this request is answered here."""

    async def answer(self, context: RequestContext, frame: bytes) -> bytes | None:
        """The answer's encoded body (``None``: a Produce of ``acks=0``, answered by no answer)."""

    def close(self) -> None:
        """Release what answering held (a ZooKeeper session)."""


class NoOldVersions:
    """Answers no old version: a front plugged with none."""

    @property
    def versions(self) -> Mapping[int, range]:
        return {}

    def answers(self, head: RequestHead) -> bool:
        return False

    async def answer(self, context: RequestContext, frame: bytes) -> bytes | None:
        raise AssertionError("answers nothing")

    def close(self) -> None:
        pass

"""The front's TCP server: per client connection, requests answered one at a time, in order, relayed to the broker
or answered by the front.

Each client connection gets its own connection to the broker, opened when the client connects, and the two live and
die together: a broker that is down when a client connects, or that closes the connection or goes away in the middle
of an answer, makes the front close the client's connection, which is what a client of that broker would have seen
(a refused or a dropped connection), never a request left hanging. A client's requests are read one at a time: the
next is read only once the previous one is answered, as Kafka mutes a channel until its response is sent, so answers
come back in the order asked and a relayed request needs no bookkeeping: its bytes go to the broker unchanged, the
correlation id with them, and the broker's answer comes back the same way, copied as it arrives without being
parsed (Fetch and Produce stay cheap), except the answers that name brokers (:mod:`.rewrite`) and ApiVersions
(:mod:`.api_versions`), which are parsed, rewritten and written again. The APIs of the local table
(:mod:`.handlers`) are answered by their handlers, possibly after a long wait, and the old versions ZooKeeper-era
clients speak (Fetch v0-v3, ListOffsets v0, OffsetCommit and OffsetFetch v0) by :mod:`.legacy_versions`, as Kafka
0.10 answered them.

A request the group coordinator will never answer (Kafka leaves a JoinGroup or SyncGroup unanswered once a newer
request of the same member took its place, or the member was removed while it waited:
:class:`~.coordinator_runtime.RequestDropped`) closes its connection. The connection is muted behind
it, so the client's newer request came on another connection or never will; closing is what the client would
otherwise wait for (its request timeout, which closes the connection), without holding the connection meanwhile.
A client that closes its connection while its request waits is noticed when the answer is written: the answer is
discarded, and the member is left to the coordinator's timeouts, as in Kafka.

A Produce with ``acks=0`` is the one request Kafka never answers, and not every broker follows that (Tansu answers
it), so an answer may or may not come. The front relays it with ``acks=1`` and drops the answer: the client gets
none, as from Kafka, and the connection stays in step whatever the broker does. The broker's work is what Kafka does
for ``acks=0`` before it reads the connection's next request (the append to its own log), so the client waits no
longer than on Kafka; and where the answer carries an error, the front closes the connection, as Kafka does.

A request the front cannot read (a size prefix out of bounds, a header shorter than a header, an API key Kafka does
not define, a version of ApiVersions, a rewritten or a local API that the front cannot parse, a local API's body that
does not parse) closes that client's connection, as Kafka closes it; a client that goes away in the middle of a
request only ends its own connection. Nothing a client sends stops the front or touches another connection.

Its events (``front.*``, logger ``zkconsumer.front.server``) are declared once in :mod:`zkconsumer.events.front`
and listed on the front's page (``docs/front.md``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kio.schema.api_versions.v0.response import ApiVersion, ApiVersionsResponse
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader
from kio.static.primitive import i16

from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.front.groups.coordinator_runtime import RequestDropped
from zkconsumer.front.proxy.api_versions import advertise
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.handlers import (
    BrokerTimedOut,
    LocalApis,
    NoOldVersions,
    OldVersions,
    RequestContext,
    local_ranges,
)
from zkconsumer.front.proxy.rewrite import REWRITTEN, Advertised, rewrite_brokers
from zkconsumer.front.proxy.topic_holds import TopicHolds
from zkconsumer.front.proxy.upstream import (
    BrokerLost,
    ClientGone,
    Upstream,
    connect_upstream,
    drain_client,
    write_to_client,
)
from zkconsumer.front.proxy.wire import (
    AcksZeroFailed,
    MalformedRequest,
    MalformedResponse,
    RequestHead,
    TruncatedFrame,
    decode_request,
    decode_response,
    encode_response,
    known_versions,
    produce_acks,
    read_frame,
    read_request_head,
    request_header_type,
    response_correlation_id,
    with_acks,
)
from zkconsumer.kafka.api_keys import API_VERSIONS, METADATA, PRODUCE
from zkconsumer.log import EventLogger, get_logger


def _failed(produced: Any) -> bool:
    return any(partition.error_code != ErrorCode.none
               for topic in produced.responses for partition in topic.partition_responses)



#: what ends a connection as expected: its ``reason`` in ``front.connection_closed``, and its own warning's name
_PROBLEMS: dict[type[Exception], tuple[str, str]] = {
    MalformedRequest: ("invalid request", ev.FRONT_REQUEST_INVALID),
    TruncatedFrame: ("truncated request", ev.FRONT_REQUEST_TRUNCATED),
    BrokerLost: ("broker lost", ev.FRONT_BROKER_LOST),
    MalformedResponse: ("invalid answer", ev.FRONT_ANSWER_INVALID),
    BrokerTimedOut: ("broker timed out", ev.FRONT_BROKER_LOST),
}


class FrontServer:
    """The front: :meth:`start` binds and accepts, :meth:`close` stops accepting and closes every connection.

    ``local`` is the table of the APIs the front answers itself (:mod:`.handlers`); every other request is relayed.
    """

    def __init__(self, config: FrontConfig, local: LocalApis | None = None, holds: TopicHolds | None = None,
                 legacy: OldVersions | None = None) -> None:
        self.config = config
        self.local = dict(local or {})
        #: the topics every Metadata answer shows smaller than the broker has them (:mod:`.topic_holds`)
        self.holds = holds or TopicHolds()
        #: the old versions Kafka 0.8-0.10 clients speak (:mod:`zkconsumer.front.legacy`), answered before the local
        #: table
        self.legacy: OldVersions = legacy or NoOldVersions()
        self._local_ranges = local_ranges(self.local)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._ids = itertools.count(1)
        self._outage_since: float | None = None
        self._warned_several_brokers = False
        self.log: EventLogger = get_logger("zkconsumer.front.server").bind(upstream=",".join(config.bootstrap))
        self.port = config.port
        self.advertised = Advertised(config.advertised_host or config.host, config.advertised_port or config.port)

    async def start(self, before_serving: Callable[[FrontServer], Awaitable[None]] | None = None) -> None:
        """Bind, then ``before_serving`` (once the port and the advertised address are known, before any client
        connection is taken: the group store's load), then serve."""
        self._server = await asyncio.start_server(self._serve, self.config.host, self.config.port,
                                                  start_serving=False)
        self.port = self._server.sockets[0].getsockname()[1]
        self.advertised = Advertised(self.config.advertised_host or self.config.host,
                                     self.config.advertised_port or self.port)
        if before_serving is not None:
            await before_serving(self)
        await self._server.start_serving()
        listen = Advertised(self.config.host, self.port).address
        self.log.emit(ev.FRONT_STARTED, listen=listen, advertised=self.advertised.address,
                      local_apis=sorted(self.local), group_settings=self.config.group_settings())

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
        await asyncio.to_thread(self.legacy.close)
        self.log.emit(ev.FRONT_STOPPED, connections=len(tasks))

    # --- a client connection -----------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        connection_id = next(self._ids)
        peer = writer.get_extra_info("peername")
        client = Advertised(str(peer[0]), int(peer[1])).address if peer else "?"
        log = self.log.bind(connection=connection_id, client=client)
        started = time.monotonic()
        requests, reason = 0, "client closed"
        upstream: Upstream | None = None
        try:
            upstream = await self._connect_upstream(log)
            if upstream is None:
                reason = "broker unavailable"
                return
            while True:
                frame = await read_frame(reader, self.config.max_request_bytes)
                if frame is None:
                    break
                head = read_request_head(frame)
                await self._answer(head, frame, upstream, writer, client, connection_id)
                requests += 1
                if upstream.abandoned:
                    raise BrokerTimedOut(f"the broker did not answer what request {head.correlation_id} (API key "
                                         f"{head.api_key}) relayed to it in time")
        except (MalformedRequest, TruncatedFrame, BrokerLost, MalformedResponse, BrokerTimedOut) as exc:
            reason, event = _PROBLEMS[type(exc)]
            log.warning(event, reason=str(exc))
        except AcksZeroFailed:
            reason = "acks=0 produce failed"
        except RequestDropped:
            reason = "request dropped"
        except (ClientGone, ConnectionError):
            reason = "client reset"
        except asyncio.CancelledError:
            reason = "front stopped"
        except Exception as exc:  # a bug in the front or a handler: this connection ends, the front goes on
            reason = "error"
            log.emit(ev.FRONT_CONNECTION_FAILED, error=f"{type(exc).__name__}: {exc}")
        finally:
            self._connections.discard(task)
            if upstream is not None:
                await upstream.close()
            writer.close()
            with contextlib.suppress(ConnectionError, OSError, asyncio.CancelledError):
                await writer.wait_closed()
            log.emit(ev.FRONT_CONNECTION_CLOSED, reason=reason, requests=requests, duration_ms=elapsed_ms(started))

    async def _connect_upstream(self, log: EventLogger) -> Upstream | None:
        upstream, errors = await connect_upstream(self.config)
        if upstream is not None:
            if self._outage_since is not None:
                log.emit(ev.FRONT_BROKER_RECOVERED, down_ms=elapsed_ms(self._outage_since))
                self._outage_since = None
            log.emit(ev.FRONT_CONNECTION_OPENED, broker=upstream.address)
            return upstream
        if self._outage_since is None:
            self._outage_since = time.monotonic()
            log.warning(ev.FRONT_BROKER_UNAVAILABLE, error="; ".join(errors))
        else:
            log.debug(ev.FRONT_BROKER_UNAVAILABLE, error="; ".join(errors))
        return None

    async def _answer(self, head: RequestHead, frame: bytes, upstream: Upstream, client: asyncio.StreamWriter,
                      peer: str, connection_id: int) -> None:
        local = self.local.get(head.api_key)
        if self.legacy.answers(head):
            header, _ = entity_reader(request_header_type(head.api_key, head.api_version))(frame, 0)
            answer = await self.legacy.answer(RequestContext(
                head, header.client_id, peer, connection_id,
                relay=lambda body: upstream.exchange(body, head.correlation_id, header.client_id)), frame)
            if answer is None:  # a Produce with acks=0: the client expects none
                return
            write_to_client(client, answer)
        elif local is not None:
            if not local.min_version <= head.api_version <= local.max_version:
                raise MalformedRequest(f"version {head.api_version} of API key {head.api_key} is not supported")
            request = decode_request(head, frame)
            header, _ = entity_reader(request_header_type(head.api_key, head.api_version))(frame, 0)
            context = RequestContext(head, header.client_id, peer, connection_id,
                                     relay=lambda body: upstream.exchange(body, head.correlation_id, header.client_id))
            answer = await local.handle(context, request)
            if (answer.__api_key__, answer.__version__) != (head.api_key, head.api_version):
                raise TypeError(f"the handler of API key {head.api_key} v{head.api_version} answered "
                                f"{type(answer).__name__} v{answer.__version__}")
            write_to_client(client, encode_response(head.correlation_id, answer))
        elif head.api_key == API_VERSIONS and head.api_version not in known_versions(API_VERSIONS):
            write_to_client(client, encode_response(head.correlation_id, self._unsupported_api_versions()))
        elif head.api_key in REWRITTEN or head.api_key == API_VERSIONS:
            if head.api_version not in known_versions(head.api_key):
                raise MalformedRequest(f"version {head.api_version} of API key {head.api_key} is not supported")
            upstream.send(frame)
            write_to_client(client, self._rewritten(head, await upstream.read_answer()))
        elif head.api_key == PRODUCE and (acks := produce_acks(head, frame))[0] == 0:
            upstream.send(with_acks(frame, acks[1], 1))
            answer = await upstream.read_answer()  # the client expects none
            if head.api_version in known_versions(PRODUCE) and _failed(decode_response(PRODUCE, head.api_version,
                                                                                       answer)):
                raise AcksZeroFailed(f"a Produce with acks=0 (correlation id {head.correlation_id}) failed")
            return
        else:
            upstream.send(frame)
            await upstream.copy_answer(client, head.correlation_id)
        await drain_client(client)

    def _rewritten(self, head: RequestHead, answer: bytes) -> bytes:
        if response_correlation_id(answer) != head.correlation_id:
            raise MalformedResponse(f"an answer with correlation id {response_correlation_id(answer)} to request "
                                    f"{head.correlation_id}")
        body = decode_response(head.api_key, head.api_version, answer)
        if head.api_key == API_VERSIONS:
            body = advertise(body, self._local_ranges, self.legacy.versions)
        else:
            if head.api_key == METADATA and len(body.brokers) > 1 and not self._warned_several_brokers:
                self._warned_several_brokers = True
                self.log.warning(ev.FRONT_SEVERAL_BROKERS, brokers=sorted(b.node_id for b in body.brokers))
            if head.api_key == METADATA:
                body = self.holds.metadata(body)
            body = rewrite_brokers(head.api_key, body, self.advertised)
        return encode_response(head.correlation_id, body)

    def _unsupported_api_versions(self) -> Any:
        """Kafka's answer to an ApiVersions version it does not know: version 0's layout, UNSUPPORTED_VERSION, and
        the versions of ApiVersions it does know, so the client asks again with one of them."""
        versions = known_versions(API_VERSIONS)
        return ApiVersionsResponse(error_code=ErrorCode.unsupported_version, api_keys=(
            ApiVersion(api_key=i16(API_VERSIONS), min_version=i16(versions.start),
                       max_version=i16(versions.stop - 1)),))

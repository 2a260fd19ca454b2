"""The front a comparison on the embedded environment starts for itself gives its KIP-848 groups the classic
members' session timeout and Kafka's ratio of heartbeat intervals (under KIP-848 both are the coordinator's), so that
a SIGKILLed member's partitions wait as long under every protocol: asked of the real front before the real broker."""

from __future__ import annotations

import contextlib
import datetime
import json
import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest
from kio.index import load_request_schema
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32, i32Timedelta
from support import wait_for

from zkconsumer.embedded.servers import ServerOptions, Servers, provide_servers
from zkconsumer.front.proxy.client import exchange
from zkconsumer.front.proxy.entities import build
from zkconsumer.members.modern_member import consumer_group_timeouts_ms
from zkconsumer.migration.comparison import server_options
from zkconsumer.migration.run import CompareSettings
from zkconsumer.migration.scenes import parse_protocols

pytestmark = pytest.mark.migration


@contextlib.contextmanager
def run_front(zookeeper: str, broker: str, settings: CompareSettings) -> Iterator[Servers]:
    """The servers of a comparison given a broker to front, as the plugin gives it the session's."""
    with provide_servers(server_options(ServerOptions(zookeeper, broker, front=True), settings)) as servers:
        yield servers


def test_the_run_s_front_runs_kip848_groups_with_the_classic_session(zookeeper_connect, broker_bootstrap, tmp_path):
    settings = CompareSettings("", "", parse_protocols("consumer-uniform"), tmp_path / "out", session_timeout_ms=4000)
    session_ms, heartbeat_ms = consumer_group_timeouts_ms(4000)
    assert (session_ms, heartbeat_ms) == (4000, 1110)
    group = f"run-front-{uuid.uuid4().hex[:6]}"
    with run_front(zookeeper_connect, broker_bootstrap, settings) as servers:
        assert servers.front_log is not None and servers.front_log.parent == settings.output_dir / "front"
        assert servers.broker == broker_bootstrap != servers.bootstrap
        front_log = servers.front_log
        joined = exchange(servers.bootstrap, build(
            load_request_schema(68, 0), group_id=group, member_id="", member_epoch=i32(0),
            rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)), subscribed_topic_names=("t",),
            topic_partitions=()))
        assert joined.error_code == ErrorCode.none and joined.member_id
        assert joined.heartbeat_interval == datetime.timedelta(milliseconds=heartbeat_ms)

        def expired() -> list[dict]:  # no more heartbeats: the member is gone after the session, not Kafka's 45 s
            events = [json.loads(line) for line in front_log.read_text().splitlines() if line.startswith("{")]
            return [e for e in events if e.get("event") == "front.consumer_group.member_expired"
                    and e.get("group") == group]

        found = wait_for(expired, timeout=20.0)
        assert isinstance(found, list)
        assert [(e["member_id"], e["session_timeout_ms"]) for e in found] == [(joined.member_id, session_ms)]


def test_the_run_s_front_says_the_settings_each_mode_gives_it(zookeeper_connect, broker_bootstrap, tmp_path):
    """What the report reads (identify()) is what the run's front runs: the classic members' session for its KIP-848
    groups with ``same``, Kafka's defaults with ``stock``."""
    from zkconsumer.kafka.coordinator_identity import identify

    for mode, wanted in (("same", ("1000", "4000", "1110")), ("stock", ("6000", "45000", "5000"))):
        settings = CompareSettings("", "", parse_protocols("consumer"), tmp_path / mode, settings_mode=mode)
        with run_front(zookeeper_connect, broker_bootstrap, settings) as servers:
            identity = identify(servers.bootstrap)
        found = replace(settings, identity=identity)
        assert identity.kind == "front", mode
        assert tuple(identity.settings[name] for name in (
            "group.min.session.timeout.ms", "group.consumer.session.timeout.ms",
            "group.consumer.heartbeat.interval.ms")) == wanted, mode
        (protocol,) = found.protocols
        assert (found.timeouts(protocol).session_ms, found.timeouts(protocol).heartbeat_ms) == (
            int(wanted[1]), int(wanted[2])), mode

"""The broker behind the front killed: requests through the front fail at once, as they would against the dead broker
(closed connections), and a broker back on the same address is found again by new connections."""

from __future__ import annotations

import json
import os
import signal
import socket
import time

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest
from support import wait_for
from time_scale import bounded, scaled

from zkconsumer.embedded.broker import LocalTansu
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import answers_api_versions, api_versions_request, exchange, exchange_on

#: well under any client's request timeout: what "promptly" means here (on the reference machine)
PROMPT = 5.0

pytestmark = pytest.mark.servers


def _events(front: FrontProcess) -> list[dict]:
    lines = front.log_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


@pytest.mark.timeout(150)  # its waits: 15 + 30 + 30 + 3 + 30 s, and two brokers and a front started
def test_a_killed_broker_fails_requests_through_the_front_promptly_and_a_restarted_one_is_found(tmp_path):
    broker = LocalTansu(tmp_path / "broker")
    broker.start()
    restarted: LocalTansu | None = None
    try:
        with FrontProcess(broker.address, tmp_path / "front") as front:
            host, port = front.address.rsplit(":", 1)
            kept = socket.create_connection((host, int(port)), timeout=bounded(30))
            assert exchange_on(kept, api_versions_request()).error_code == ErrorCode.none
            assert broker.record is not None
            os.kill(broker.record.pid, signal.SIGKILL)
            wait_for(lambda: broker.record is not None and not broker.record.is_alive())

            started = time.monotonic()
            with pytest.raises(OSError):  # the open connection: closed by the front, as the broker's would be
                exchange_on(kept, MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                                  include_topic_authorized_operations=False))
            kept.close()
            with pytest.raises(OSError):  # a new connection: closed at once, there is no broker to relay to
                exchange(front.address, api_versions_request(), timeout=bounded(30))
            admin = AdminClient({"bootstrap.servers": front.address, "socket.timeout.ms": 30000})
            with pytest.raises(KafkaException):
                admin.list_topics(timeout=3)
            assert time.monotonic() - started < scaled(PROMPT) + 3  # the admin client's own 3 s included
            lost = [e for e in _events(front) if e["event"] == "front.broker_lost"]
            unavailable = [e for e in _events(front) if e["event"] == "front.broker_unavailable"]
            assert len(lost) == 1 and lost[0]["level"] == "warning"
            assert len(unavailable) == 1, "one line for the outage, not one per refused connection"

            restarted = LocalTansu(tmp_path / "broker-again", port=broker.port)
            restarted.start()
            wait_for(lambda: answers_api_versions(front.address), timeout=30)
            recovered = [e for e in _events(front) if e["event"] == "front.broker_recovered"]
            assert len(recovered) == 1 and recovered[0]["down_ms"] > 0
        assert all("Traceback" not in line for line in front.log_path.read_text().splitlines())
    finally:
        broker.stop()
        if restarted is not None:
            restarted.stop()

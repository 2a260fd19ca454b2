"""A modern member whose consumer librdkafka declares dead says why and exits, rather than poll it for ever: here a
front that offers KIP-848's ``uniform`` assignor only, and a member that asks for ``range`` (UNSUPPORTED_ASSIGNOR,
fatal to librdkafka, as GROUP_ID_NOT_FOUND is)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.members import modern_member

pytestmark = pytest.mark.servers


@pytest.mark.timeout(90)
def test_a_fatal_error_is_said_once_and_ends_the_member_with_its_status(broker_bootstrap, tmp_path):
    options = ("--group-consumer-assignors", "uniform")
    with FrontProcess(broker_bootstrap, tmp_path / "front", options=options) as front:
        address = front.address
        argv = modern_member.command(bootstrap=address, group=f"fatal-{uuid.uuid4().hex[:6]}", topic="t",
                                     consumer_id="m1", strategy="range", group_protocol="consumer")
        done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=bounded(45),
                              check=False)
    assert done.returncode == modern_member.FATAL_EXIT, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (fatal,) = [e for e in events if e["event"] == "consumer.fatal_error"]
    assert fatal["code"] == "_FATAL" and "range" in fatal["reason"], fatal["reason"]
    assert fatal["bootstrap"] == address and fatal["group_protocol"] == "consumer"
    assert "Traceback" not in done.stderr

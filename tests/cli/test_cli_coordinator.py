"""``zkconsumer coordinator`` against the real broker: a group without broker-side members (what the legacy consumer
leaves), then a live group of modern confluent-kafka consumers; bad input is one line and a non-zero exit."""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace

import pytest
from support import wait_for

from zkconsumer import cli
from zkconsumer.kafka.topics import create_topic
from zkconsumer.tools.coordinator import offsets_partition_for


@pytest.fixture
def coordinator(capsys):
    """``zkconsumer coordinator`` in this process, as the command runs (a child costs more to start than this takes)."""
    def run(bootstrap: str, *args: str) -> SimpleNamespace:
        capsys.readouterr()
        status = cli.main(["coordinator", "--bootstrap-server", bootstrap, *args])
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=status, stdout=out, stderr=err)
    return run


def test_the_coordinator_of_an_empty_and_of_a_live_group(bootstrap_servers, topic_name, coordinator):
    from confluent_kafka import Consumer

    group = f"coordinator-{uuid.uuid4().hex[:8]}"
    empty = coordinator(bootstrap_servers, "--group", group, "--offsets-partitions", "7", "--json")
    assert empty.returncode == 0, empty.stderr
    view = json.loads(empty.stdout)
    host, port = bootstrap_servers.rsplit(":", 1)
    assert (view["group"], view["offsets_partition"], view["offsets_partitions"]) == \
        (group, offsets_partition_for(group, 7), 7)
    assert (view["coordinator"]["host"], view["coordinator"]["port"]) == (host, int(port))
    assert (view["state"], view["members"]) == ("Dead", [])  # a group the coordinator never saw, as Kafka answers

    create_topic(bootstrap_servers, topic_name, 2)
    members = [Consumer({"bootstrap.servers": bootstrap_servers, "group.id": group, "client.id": f"modern-{i}",
                         "session.timeout.ms": 3000, "heartbeat.interval.ms": 500, "max.poll.interval.ms": 60000})
               for i in range(2)]
    try:
        for member in members:
            member.subscribe([topic_name])

        def stable():
            for member in members:
                member.poll(0.1)
            if not all(m.assignment() for m in members):
                return None
            got = json.loads(coordinator(bootstrap_servers, "--group", group, "--json").stdout)
            return got if got["state"] == "Stable" and len(got["members"]) == 2 else None

        live = wait_for(stable, timeout=30)
        assert {m["member_id"].split("-")[0] for m in live["members"]} <= {"modern", "rdkafka"}
        text = coordinator(bootstrap_servers, "--group", group)
        lines = text.stdout.splitlines()
        assert lines[0] == f"group:            {group}"
        assert lines[1].startswith(f"offsets topic:    __consumer_offsets-{offsets_partition_for(group)} ")
        assert "state:            Stable" in lines and "members:          2" in lines
    finally:
        for member in members:
            member.close()


def test_bad_input_is_one_line(bootstrap_servers, coordinator):
    bad = coordinator(bootstrap_servers, "--group", "")
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == ("zkconsumer coordinator: group id '' is not valid for the broker (INVALID_GROUP_ID): it "
                          "must not be empty\n")
    zero = coordinator(bootstrap_servers, "--group", "g", "--offsets-partitions", "0")
    assert (zero.returncode, zero.stderr) == (2, "zkconsumer coordinator: --offsets-partitions must be at least 1 "
                                                 "(got 0)\n")
    down = coordinator("127.0.0.1:1", "--group", "g", "--socket-timeout-ms", "300")
    assert down.returncode == 1 and down.stderr.startswith("zkconsumer coordinator: broker 127.0.0.1:1 did not answer")
    assert len(down.stderr.splitlines()) == 1

"""A command member's reports (the verifiable consumer's JSON lines) read as our members' events and deliveries:
pure, no process."""

from __future__ import annotations

import json

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.events.validation import problems
from zkconsumer.members.command_member import CommandMember, ReportReader, environment
from zkconsumer.members.settle import MemberState


def line(name: str, ms: int, **fields) -> str:
    return json.dumps({"timestamp": ms, "name": name, **fields})


def parts(*numbers: int, topic: str = "t") -> list[dict]:
    return [{"topic": topic, "partition": n} for n in numbers]


def read_all(reader: ReportReader, lines: list[str]) -> list[dict]:
    return [event for text in lines for event in reader.read(text)]


def owned(event: dict) -> list[int]:
    return [p["partition"] for p in event["owned"]]


def test_an_eager_member_s_revocation_and_assignment_are_one_rebalance_and_its_records_its_deliveries(tmp_path):
    deliveries = tmp_path / "a.deliveries"
    reader = ReportReader(consumer_id="g_a", group="g", topic="t", group_protocol="classic", strategy="range",
                          deliveries=deliveries)
    events = read_all(reader, [
        line("startup_complete", 1_000),
        line("partitions_assigned", 1_100, partitions=parts(0, 1)),
        line("record_data", 1_200, topic="t", partition=0, offset=5, key="7", value="range:7"),
        line("record_data", 1_200, topic="other", partition=0, offset=6, key="8", value="other:8"),
        line("records_consumed", 1_200, count=1, partitions=[]),
        line("offsets_committed", 1_300, offsets=[{"topic": "t", "partition": 0, "offset": 6}], success=True),
        line("partitions_revoked", 2_000, partitions=parts(0, 1)),
        line("partitions_assigned", 2_500, partitions=parts(1)),
        line("offsets_committed", 2_600, offsets=[], success=False, error="REBALANCE_IN_PROGRESS"),
        "Exception in thread main",
        line("shutdown_complete", 3_000),
    ])
    reader.end()
    assert [e["event"] for e in events] == [
        "consumer.subscribed", "rebalance.started", "rebalance.completed", "offsets.committed", "rebalance.started",
        "rebalance.release", "rebalance.completed", "offsets.commit_failed", "demo.member_output",
        "consumer.shutdown"]
    assert [p for e in events for p in problems(e)] == []
    assert owned(events[2]) == [0, 1] and owned(events[6]) == [1]
    assert events[6]["duration_ms"] == 500.0 and events[4]["rebalance_id"] == events[6]["rebalance_id"] == 2
    assert events[4]["timestamp"] == "1970-01-01T00:00:02.000000Z"
    assert events[0]["protocol"] == "eager" and events[3]["offsets"] == [{"topic": "t", "partition": 0, "offset": 6}]
    assert events[8]["line"] == "Exception in thread main"
    assert deliveries.read_text().split(" ", 1)[1] == "t 0 5 range:7\n"  # our members' timed format; another topic's
    # record left out
    state = MemberState()
    for event in events:
        state.observe(event)
    assert not state.rebalancing and state.completed == 2 and [tp.partition for tp in state.owned] == [1]


def test_a_kip848_member_s_every_report_is_a_rebalance_of_its_own_and_an_assignment_adds():
    reader = ReportReader(consumer_id="g_a", group="g", topic="t", group_protocol="consumer", strategy="uniform",
                          deliveries=None)
    events = read_all(reader, [
        line("partitions_assigned", 1_000, partitions=parts(0, 1, 2)),
        line("partitions_revoked", 2_000, partitions=parts(2)),
        line("partitions_assigned", 2_100, partitions=parts(3)),
        line("partitions_lost", 3_000, partitions=parts(0)),
    ])
    completed = [e for e in events if e["event"] == "rebalance.completed"]
    assert [owned(e) for e in completed] == [[0, 1, 2], [0, 1], [0, 1, 3], [1, 3]]
    assert [e["cause"] for e in events if e["event"] == "rebalance.started"] == ["assign", "revoke", "assign", "lost"]
    assert events[0]["protocol"] == "cooperative" and events[0]["group_protocol"] == "consumer"
    assert [p for e in events for p in problems(e)] == []


def test_the_environment_names_every_setting_and_leaves_a_kip848_member_s_session_to_its_coordinator(tmp_path):
    classic = environment(bootstrap="b:9092", topic="t", group="g", client_id="g_a", member="a",
                          group_protocol="classic", assignor="cooperative-sticky", session_timeout_ms=4000,
                          heartbeat_interval_ms=666, state_dir=tmp_path, base={"PATH": "/bin", "ZKCONSUMER_TOPIC": "x"})
    assert classic == {"PATH": "/bin", "ZKCONSUMER_BOOTSTRAP_SERVERS": "b:9092", "ZKCONSUMER_TOPIC": "t",
                       "ZKCONSUMER_GROUP_ID": "g", "ZKCONSUMER_CLIENT_ID": "g_a", "ZKCONSUMER_MEMBER": "a",
                       "ZKCONSUMER_GROUP_PROTOCOL": "classic", "ZKCONSUMER_ASSIGNOR": "cooperative-sticky",
                       "ZKCONSUMER_SESSION_TIMEOUT_MS": "4000", "ZKCONSUMER_HEARTBEAT_INTERVAL_MS": "666",
                       "ZKCONSUMER_STATE_DIR": str(tmp_path)}
    consumer = environment(bootstrap="b:9092", topic="t", group="g", client_id="g_a", member="a",
                           group_protocol="consumer", assignor="uniform", session_timeout_ms=4000,
                           heartbeat_interval_ms=666, group_instance_id="a-1",
                           base={"ZKCONSUMER_SESSION_TIMEOUT_MS": "1"})
    assert "ZKCONSUMER_SESSION_TIMEOUT_MS" not in consumer and "ZKCONSUMER_HEARTBEAT_INTERVAL_MS" not in consumer
    assert consumer["ZKCONSUMER_GROUP_INSTANCE_ID"] == "a-1"


def test_a_command_line_is_split_as_a_shell_would_and_bad_ones_are_one_line():
    assert CommandMember.of("java -cp 'build:lib/*' Orders").argv == ("java", "-cp", "build:lib/*", "Orders")
    assert str(CommandMember.of(["python", "-m", "my consumer"])) == "python -m 'my consumer'"
    for bad, said in (("", "is empty"), ("java 'x", "No closing quotation")):
        with pytest.raises(UsageError, match=said):
            CommandMember.of(bad)

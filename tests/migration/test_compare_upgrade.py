"""The shipped ``upgrade`` scenario through the comparison, with real clients at the run's own front: a
classic group's four members are restarted one by one with ``group.protocol=consumer`` while messages flow.
The front converts the live classic group at the first upgraded member's heartbeat (Kafka 4.x's online upgrade), the
classic members go on in the consumer group until their turn, and the group ends with every member on KIP-848's
protocol; nothing is lost, and the report says which protocol each member spoke at the end of each scene."""

from __future__ import annotations

import json

import pytest
from test_compare_kip848 import compare_at_broker

pytestmark = pytest.mark.migration


@pytest.mark.timeout(240)
def test_an_eager_group_is_upgraded_member_by_member_and_loses_nothing(zkconsumer_migration):
    """``range``, not cooperative-sticky: librdkafka's cooperative-sticky leader writes each member's sticky state
    (its subscription's user data) into its assignment, and Kafka 4.0 on refuses to convert a group whose
    assignments carry user data (KAFKA-18134), as the front does; so that group converts only where m1's first
    heartbeat comes before the round its clean leave opens is synced (docs/migration-compare.md). An eager
    assignor's assignments carry none: the conversion always happens."""
    result = zkconsumer_migration.compare(scenario="upgrade", protocols=["range"], partitions=4)
    result.assert_nothing_lost()
    outcome = result["range"]
    assert outcome.produced > 0 and outcome.delivered == outcome.produced and not outcome.member_failures
    report = json.loads(result.report.read_text())
    played = report["protocols"]["range"]
    # 1. the members' own word: classic at first, one more on KIP-848 at each scene, all of them at the end
    members = ["m1", "m2", "m3", "m4"]
    assert [s["group_protocols"] for s in played["scenes"]] == [
        {m: "consumer" if i < upgraded else "classic" for i, m in enumerate(members)} for upgraded in range(5)] + [
        {"m1": "consumer", "m3": "consumer", "m4": "consumer"}]  # m2 SIGKILLed after its upgrade
    # the settings table has the upgraded members' row, and the timeouts say whose session applies once upgraded
    assert report["member_settings"]["consumer"]["group.protocol"] == "consumer"
    assert "once upgraded, session 4 s" in report["timeouts"]["range"]["source"]
    # 2. the coordinator's: the live classic group converted once, at m1's first heartbeat, its three classic
    # members kept; each member then joined by ConsumerGroupHeartbeat; it never went back to a classic group
    events = [json.loads(line) for line in (result.report.parent / "front" / "front.log").read_text().splitlines()
              if line.startswith("{")]
    group = played["group"]
    mine = [e for e in events if e.get("group") == group]
    (upgraded,) = [e for e in mine if e["event"] == "front.consumer_group.upgraded"]
    assert sorted(m[len(group) + 1:].split("-", 1)[0] for m in upgraded["members"]) == ["m2", "m3", "m4"]
    joined = [e["client_id"].rsplit("_", 1)[1] for e in mine if e["event"] == "front.consumer_group.member_joined"]
    assert joined == members
    assert not [e for e in mine if e["event"] == "front.consumer_group.downgraded"]
    # 3. the page says it too
    page = result.page.read_text()
    assert "Members upgraded in place" in page and "consumer: m1; classic: m2, m3, m4" in page


@pytest.mark.timeout(240)  # the command's 180 s
def test_an_upgrade_at_a_coordinator_without_kip848_stops_that_protocol_in_one_line(zookeeper_connect,
                                                                                   broker_bootstrap, tmp_path):
    """The broker's own coordinator (Tansu's: no ConsumerGroupHeartbeat) cannot take the upgraded member: the
    protocol's run stops at the first upgrade, saying so in one line (the coordinator, and what librdkafka said)."""
    report, problems = compare_at_broker(zookeeper_connect, broker_bootstrap, tmp_path / "out", "cooperative-sticky",
                                         "upgrade")
    assert problems == [
        f"zkconsumer migration: cooperative-sticky: the run stopped early: the broker's own group coordinator at "
        f"{broker_bootstrap} does not run KIP-848 consumer groups (ConsumerGroupHeartbeatRequest not supported by "
        f"broker)"]
    played = report["protocols"]["cooperative-sticky"]
    assert [s["scene"] for s in played["scenes"]] == [1, 2]  # the script went no further than the first upgrade

"""A scenario's ``restart`` of a server every protocol shares, played once for all of them: the run's own front (the
modern groups' coordinator) before the session's broker, and the embedded environment's ZooKeeper; the members go on
and nothing is lost. Servers given by address are refused in one line, before anything plays."""

from __future__ import annotations

import json

import pytest
from time_scale import scaled

from zkconsumer.embedded.servers import ENVIRONMENT, ServerOptions
from zkconsumer.errors import UsageError
from zkconsumer.migration.comparison import compare, plan
from zkconsumer.scenarios.model import (
    RESTART,
    RESTART_COORDINATOR,
    RESTART_ZOOKEEPER,
    START,
    Action,
    Member,
    Production,
    Scenario,
    Scene,
    Topic,
)

pytestmark = pytest.mark.migration


def restarting(server: str) -> Scenario:
    return Scenario("restart", "a restart", "", Topic("restart", 2), Production(rate=20), (Member("a"), Member("b")),
                    (Scene(1, "two members", "", (Action(START, "a"), Action(START, "b"))),
                     Scene(2, f"the {server} restarted", "", (Action(RESTART, server=server),))),
                    session_timeout_ms=6000, source="the test's restart")


def restarts_recorded(outcome) -> list[dict]:
    events = [json.loads(line) for line in outcome.events.read_text().splitlines()]
    return [e for e in events if e["event"] == "demo.server_restarted"]


@pytest.mark.timeout(150)
def test_the_run_s_front_restarted_once_for_every_protocol(tmp_path, zookeeper_connect, broker_bootstrap):
    settings = plan(tmp_path / "out", scenario=restarting(RESTART_COORDINATOR), protocols=["legacy-range", "range",
                                                                                          "consumer"], pace=0.3)
    done = compare(settings, ServerOptions(zookeeper_connect, broker_bootstrap, front=True))
    done.result.assert_nothing_lost()
    said = {name: restarts_recorded(o) for name, o in done.result.protocols.items()}
    assert all(len(r) == 1 and r[0]["server"] == RESTART_COORDINATOR for r in said.values()), said
    assert len({r[0]["restarted"] for r in said.values()}) == 1  # once, for all of them
    front_log = done.result.report.parent / "front" / "front.log"
    started = [line for line in front_log.read_text().splitlines() if '"front.started"' in line]
    assert len(started) == 2


@pytest.mark.timeout(150)
def test_the_environment_s_zookeeper_restarted_under_a_legacy_group(tmp_path):
    settings = plan(tmp_path / "out", scenario=restarting(RESTART_ZOOKEEPER), protocols=["legacy-range"], pace=0.3)
    done = compare(settings, ServerOptions(embedded=ENVIRONMENT, run_dir=tmp_path / "env"))
    done.result.assert_nothing_lost()
    (restarted,) = restarts_recorded(done.result["legacy-range"])
    assert restarted["restarted"] == "the embedded environment's zookeeper"
    assert 0 < restarted["duration_ms"] < scaled(60) * 1000


def test_a_server_given_by_address_is_refused_before_anything_plays(tmp_path, zookeeper_connect, broker_bootstrap):
    settings = plan(tmp_path / "out", scenario=restarting(RESTART_ZOOKEEPER), protocols=["legacy-range"])
    with pytest.raises(UsageError, match=r"^the test's restart: scene 2, action 1: restart: zookeeper is not this "
                       r"run's to restart"):
        compare(settings, ServerOptions(zookeeper_connect, broker_bootstrap))
    assert not (tmp_path / "out" / "legacy-range").exists()

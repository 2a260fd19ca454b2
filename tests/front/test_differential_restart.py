"""A coordinator restarted under its groups, at Apache Kafka 4.x (which reloads them from ``__consumer_offsets``) and at
the front (which reloads them from its group store at the broker), compared by what confluent-kafka's consumers
observe (:mod:`differential`): a classic and a KIP-848 group go on at their generation or epoch without a rebalance,
and a classic member of a consumer group that does not come back is expired after the session Kafka gives it on
load, ``group.consumer.session.timeout.ms``, not its own."""

from __future__ import annotations

import time
import uuid

import pytest
from differential import (
    CONSUMER,
    COOPERATIVE,
    PROTOCOLS,
    ChildMember,
    Coordinator,
    Member,
    Observed,
    closing,
    coordinators,
    differences,
    play,
    report,
    settle,
    split_evenly,
)

pytestmark = pytest.mark.servers

#: group.consumer.session.timeout.ms here: long enough for a KIP-848 member to find the restarted coordinator, and
#: well apart from a classic member's own session (SESSION_MS)
CONSUMER_SESSION_MS = 10_000
#: the clients look for a restarted coordinator every second at most (librdkafka's default backs off to 10 s)
RECONNECT = {"reconnect.backoff.max.ms": 1000}
#: a classic member whose session outlives the restart, Kafka's included (a JVM's controlled shutdown and start on a
#: loaded machine, tens of seconds): librdkafka counts it too, and gives its partitions up as lost once it passes
#: without a heartbeat answered
LONG_SESSION = {**COOPERATIVE, "session.timeout.ms": 120_000, **RECONNECT}


@pytest.fixture(scope="module")
def pair(broker_bootstrap, tmp_path_factory):
    with coordinators(broker_bootstrap, tmp_path_factory.mktemp("differential"), {4: 3},
                      consumer_session_ms=CONSUMER_SESSION_MS) as both:
        yield both


def new_group() -> str:
    return f"g-{uuid.uuid4().hex[:6]}"


@pytest.mark.timeout(240)
def test_a_restarted_coordinator_reloads_its_groups(pair):
    def story(c: Coordinator) -> Observed:
        from confluent_kafka import KafkaException, TopicPartition

        classic_topic, consumer_topic, mixed_topic = c.topic(4), c.topic(4), c.topic(4)
        groups = {"classic": (new_group(), classic_topic, LONG_SESSION),
                  "consumer": (new_group(), consumer_topic, {**CONSUMER, **RECONNECT})}
        members = {name: [Member(c, group, [topic], settings) for _ in range(2)]
                   for name, (group, topic, settings) in groups.items()}
        mixed_group = new_group()
        survivor = Member(c, mixed_group, [mixed_topic], {**CONSUMER, **RECONNECT})
        everyone = [*members["classic"], *members["consumer"], survivor]
        with closing(everyone):
            settle(everyone, lambda: split_evenly(members["classic"], 4) and split_evenly(members["consumer"], 4)
                   and len(survivor.assigned()) == 4)
            classic_child = ChildMember(c, mixed_group, [mixed_topic], {**PROTOCOLS["range"], **RECONNECT})
            try:
                settle(everyone, lambda: classic_child.assigned.is_set() and len(survivor.assigned()) == 2
                       and survivor.owned == survivor.assigned())
                marks = {m: len(m.calls) for m in everyone}
                generations = {name: [m.generation() for m in ms] for name, ms in members.items()}
                down = time.monotonic()
                c.stop()
            finally:
                classic_child.kill()  # gone while the coordinator was down: it never comes back
            c.start()
            print(f"{c.name} restarted in {time.monotonic() - down:.1f} s")
            expired = settle(everyone, lambda: len(survivor.assigned()) == 4, timeout=60)
            commits = {}
            for name, (_, topic, _) in groups.items():
                try:
                    members[name][0].consumer.commit(offsets=[TopicPartition(topic, p, 1) for p in
                                                              members[name][0].assigned()], asynchronous=False)
                    commits[name] = "NONE"
                except KafkaException as exc:
                    commits[name] = exc.args[0].name()
            return Observed({
                "callbacks_after": {name: [m.shape(marks[m]) for m in ms] for name, ms in members.items()},
                "generations_kept": {name: [m.generation() for m in ms] == generations[name]
                                     for name, ms in members.items()},
                "commits": commits, "survivor": [(kind, n) for kind, n, _ in survivor.shape(marks[survivor])]},
                {"classic_member_expired": expired})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}
    for name, seen in observed.items():  # a lower bound holds on any machine: not the classic member's own 3 s
        assert seen.settle_s["classic_member_expired"] >= CONSUMER_SESSION_MS / 1000 * 0.8, name

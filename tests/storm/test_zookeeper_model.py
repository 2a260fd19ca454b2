"""The model's ZooKeeper side, pure: kazoo's connection loop (a ping after half its read timeout without sending, a
drop when the ping stays unanswered through the next wait, anything read keeping the connection) and an ensemble
(reads served where the client is connected, writes through the leader)."""

from __future__ import annotations

import pytest

from zkconsumer.storm.ensemble import Ensemble
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.kazoo_connection import DROP, PING, PING_JITTER_MS, WAIT, KazooConnection

SESSION_MS = 6_000.0
HALF = SESSION_MS * 2 / 3 / 2 - PING_JITTER_MS  # 1,795 ms: half of kazoo's read timeout, less its mean jitter


def connection() -> KazooConnection:
    conn = KazooConnection(SESSION_MS)
    conn.opened(0.0, server=0)
    return conn


def test_a_connection_silent_after_its_request_pings_then_drops_about_two_thirds_of_the_session_later():
    conn = connection()
    assert conn.wait_ends_ms == pytest.approx(HALF)
    assert conn.wait_ended(HALF) == PING
    conn.pinged(HALF, answer_ms=10_000.0)  # the ping waits behind a long queue
    assert conn.wait_ends_ms == pytest.approx(2 * HALF)
    assert conn.wait_ended(2 * HALF) == DROP
    assert pytest.approx(SESSION_MS * 2 / 3 - 2 * PING_JITTER_MS) == 2 * HALF  # well before the session's end


def test_an_answered_ping_keeps_the_connection_and_the_next_ping_follows_half_a_read_timeout_later():
    conn = connection()
    conn.wait_ended(HALF)
    conn.pinged(HALF, answer_ms=HALF + 50.0)
    assert conn.wait_ended(2 * HALF) == PING  # answered; nothing sent since: the next ping is due
    conn.pinged(2 * HALF, answer_ms=2 * HALF + 1.0)
    assert conn.wait_ended(3 * HALF) == PING


def test_answers_still_arriving_keep_a_connection_whose_ping_waits_behind_them():
    conn = connection()
    conn.answering(1_000.0, 9_000.0)  # a batch of reads answered one after another
    conn.wait_ended(HALF)
    conn.pinged(HALF, answer_ms=9_001.0)
    assert conn.wait_ended(2 * HALF) in (WAIT, PING)  # read something just now: no drop
    assert conn.wait_ended(9_500.0) == PING or not conn.ping_out


def test_a_request_sent_moves_the_deadline_and_a_read_past_it_sends_a_ping_at_once():
    conn = connection()
    conn.sent(1_000.0)
    assert conn.deadline_ms == pytest.approx(1_000.0 + HALF)
    assert not conn.received(1_500.0)
    assert conn.wait_ends_ms == pytest.approx(1_000.0 + HALF)
    assert conn.received(1_000.0 + HALF + 1)  # past the deadline: kazoo pings as it reads


def test_a_dropped_connection_forgets_its_ping_and_counts_a_generation():
    conn = connection()
    conn.pinged(HALF, answer_ms=1e9)
    conn.dropped()
    assert (conn.up, conn.ping_out, conn.generation) == (False, False, 1)


def test_an_ensemble_serves_reads_where_the_client_is_connected():
    loop = EventLoop()
    zk = Ensemble(loop, 3, network_rtt_ms=0.0)
    answered: list[tuple[int, float]] = []
    for server in (0, 1, 1):
        zk.read(server, 10.0, None, lambda _, latency, server=server: answered.append((server, latency)))
    loop.run_for(100.0)
    assert sorted(answered) == [(0, 10.0), (1, 10.0), (1, 20.0)]  # server 1's two in turn, server 0's beside them
    assert (zk.requests, zk.queue_ms()) == (3, 0.0)


def test_an_ensembles_writes_go_through_the_leader_and_take_the_followers_time_too():
    loop = EventLoop()
    zk = Ensemble(loop, 3, network_rtt_ms=1.0)
    applied: list[float] = []
    latencies: list[float] = []
    first, last = zk.write(2, 1.0, 5.0, lambda: applied.append(loop.now_ms),
                           lambda _, latency: latencies.append(latency))
    loop.run_for(100.0)
    # client to follower (0.5), forwarded (0.5), served (1), forced with a quorum's round trip (5 + 1), back to the
    # follower (0.5) and the client (0.5)
    assert applied == [pytest.approx(8.0)] and latencies == [pytest.approx(9.0)] and first == last == pytest.approx(9.0)
    assert [s.free_at_ms for s in zk.servers] == [pytest.approx(2.0), pytest.approx(9.0), pytest.approx(9.0)]
    one = Ensemble(EventLoop(), 1, network_rtt_ms=1.0)
    # alone: to the server (0.5), served (1), forced (5), back (0.5)
    assert one.write(0, 1.0, 5.0, lambda: None, lambda *_: None) == (pytest.approx(7.0), pytest.approx(7.0))
    with pytest.raises(ValueError):
        Ensemble(loop, 0, 1.0)


def test_a_ping_is_booked_on_its_server_without_counting_as_a_request():
    loop = EventLoop()
    zk = Ensemble(loop, 2, network_rtt_ms=2.0)
    zk.read(0, 50.0, None, lambda *_: None)
    assert zk.ping(0, 1.0) == pytest.approx(1.0 + 50.0 + 1.0 + 1.0)  # behind the read
    assert zk.ping(1, 1.0) == pytest.approx(1.0 + 1.0 + 1.0)
    assert zk.requests == 1

"""The per-group analysis and the snapshot codec on hand-made groups, every number worked out by hand."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from zkconsumer.fleet.analysis import analyze_group
from zkconsumer.fleet.snapshot import (
    CommittedOffset,
    GroupRecord,
    Owner,
    Registration,
    SnapshotFormatError,
    decode,
    encode,
)
from zkconsumer.fleet.synthetic import synthetic_groups


def member(cid: str, **streams: int) -> Registration:
    return Registration(cid, "static", MappingProxyType(streams), MappingProxyType(streams))


def record(members, owners, registered=None, partitions=None, **extra) -> GroupRecord:
    return GroupRecord(
        group="g", read_at="2026-01-01T00:00:00.000Z",
        registered=tuple(registered if registered is not None else sorted(m.consumer_id for m in members)),
        members=tuple(members), partitions=MappingProxyType(partitions or {"t": 4}),
        owners=tuple(Owner("t", p, thread) for p, thread in owners), **extra)


def test_a_settled_group_needs_nothing():
    # legacy range over threads a-0, b-0: a-0 gets 0,1 and b-0 gets 2,3
    analysis = analyze_group(record([member("a", t=1), member("b", t=1)],
                                    [(0, "a-0"), (1, "a-0"), (2, "b-0"), (3, "b-0")]))
    row = analysis.group
    assert (row.members, row.threads, row.topics, row.partitions, row.owned) == (2, 2, 1, 4, 4)
    assert (row.unowned, row.dead_owners, row.owned_twice, row.misassigned, row.attention) == (0, 0, 0, 0, 0)
    assert row.legacy_strategy == "legacy-range" and row.attention_reasons == ""
    by_name = {s.strategy: s for s in analysis.strategies}
    assert list(by_name) == ["legacy-range", "range", "roundrobin", "sticky", "cooperative-sticky"]
    assert (by_name["range"].spread, by_name["range"].moved_partitions) == (0, 0)
    # modern roundrobin deals 0,2 to a and 1,3 to b: two partitions change hands; sticky keeps all
    assert (by_name["roundrobin"].spread, by_name["roundrobin"].moved_partitions) == (0, 2)
    assert (by_name["sticky"].moved_partitions, by_name["cooperative-sticky"].revoked_first) == (0, 0)


def test_dead_owner_unowned_and_owned_twice():
    # b died (not registered); a has two threads. Legacy range for a alone: a-0 gets 0,1, a-1 gets 2,3.
    row = analyze_group(record([member("a", t=2)], [(0, "a-1"), (2, "b-0"), (3, "a-1")], registered=["a"])).group
    assert row.unowned == 1  # partition 1
    assert row.dead_owners == 1  # partition 2, owned by b-0
    assert row.owned_twice == 1  # partition 0: a-1 holds what a-0 should claim
    assert row.misassigned == 2  # partitions 0 and 2
    assert row.attention == 3
    assert row.attention_reasons == "1 unowned, 1 owned by dead members, 1 owned twice"


def test_idle_members_and_cooperative_revocations():
    # three members, two partitions: one idle member under every strategy
    analysis = analyze_group(record([member("a", t=1), member("b", t=1), member("c", t=1)],
                                    [(0, "c-0"), (1, "c-0")], partitions={"t": 2}))
    by_name = {s.strategy: s for s in analysis.strategies}
    assert all(s.idle_members == 1 for s in analysis.strategies)
    # c owns both today; range gives 0 to a and 1 to b: both move. Sticky keeps one with c, moves one;
    # cooperative-sticky revokes that one first and assigns it in a second round.
    assert by_name["range"].moved_partitions == 2
    assert by_name["sticky"].moved_partitions == 1
    assert (by_name["cooperative-sticky"].revoked_first, by_name["cooperative-sticky"].rounds) == (1, 2)


def test_roundrobin_refused_for_differing_subscriptions_is_not_chosen():
    analysis = analyze_group(record([member("a", t=1, u=1), member("b", t=1)], [],
                                    partitions={"t": 2, "u": 1}))
    assert analysis.group.legacy_strategy == "legacy-range"
    assert analysis.group.unowned == 3


def test_codec_round_trip_and_errors():
    original = record([member("a", t=2)], [(0, "a-0")], offsets=(CommittedOffset("t", 0, 7),),
                      offsets_storage="both", consistent=False)
    assert decode(encode(original)) == original
    for record_ in synthetic_groups(50, seed=1):
        assert decode(encode(record_)) == record_
    for bad, message in (("{", "not JSON"), ("[]", "not a JSON object"), ('{"v": 2}', "unknown snapshot version"),
                         (encode(original).replace('"both"', '"elsewhere"'), "offsets_storage"),
                         (encode(original).replace('["t",0,7]', '["t","0",7]'), "offsets")):
        with pytest.raises(SnapshotFormatError, match=message):
            decode(bad)

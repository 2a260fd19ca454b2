"""``analyze fleet`` on Spark (the shared local[2] session): a hand-made fleet's tables and page, numbers worked out
by hand, and bad input leaving nothing behind."""

from __future__ import annotations

import re

import pytest
from browser import assert_offline, dump_dom
from hand_made_fleet import FLEET

from zkconsumer.errors import UsageError
from zkconsumer.fleet.fleet_job import run_fleet_job
from zkconsumer.fleet.snapshot import encode


@pytest.mark.browser
def test_fleet_tables_and_page(spark, tmp_path):
    snapshot = tmp_path / "fleet.jsonl"
    snapshot.write_text("".join(encode(g) + "\n" for g in FLEET) + "not a record\n\n")
    out = tmp_path / "out"

    summary = run_fleet_job(spark, [str(snapshot)], str(out))

    groups = {r["group"]: r for r in spark.read.parquet(str(out / "groups")).collect()}
    assert set(groups) == {"settled", "broken", "crowded"}
    broken = groups["broken"]
    assert (broken["members"], broken["threads"], broken["partitions"], broken["unowned"], broken["dead_owners"],
            broken["owned_twice"], broken["offsets_storage"], broken["attention"]) == (1, 2, 4, 1, 1, 1, "kafka", 3)
    assert groups["settled"]["attention"] == 0
    assert (groups["crowded"]["members"], groups["crowded"]["owned_twice"]) == (3, 2)
    strategies = {(r["group"], r["strategy"]): r for r in spark.read.parquet(str(out / "strategies")).collect()}
    assert len(strategies) == 15
    assert strategies[("settled", "roundrobin")]["moved_partitions"] == 2
    assert strategies[("crowded", "sticky")]["idle_members"] == 1
    assert strategies[("crowded", "cooperative-sticky")]["revoked_first"] == 1

    t = summary.totals
    assert (t.groups, t.members, t.partitions, t.unowned, t.dead_owners, t.owned_twice, t.needing_attention,
            t.broken_lines) == (3, 6, 10, 1, 1, 3, 2, 1)
    assert dict(summary.storage) == {"zookeeper": 1, "kafka": 1, "none": 1, "both": 0}
    assert dict(summary.sizes)["1"] == 1 and dict(summary.sizes)["2"] == 1 and dict(summary.sizes)["3-4"] == 1
    by_strategy = {s.strategy: s for s in summary.strategies}
    assert by_strategy["roundrobin"].moved_partitions == 2 + 0 + 2  # settled, broken (a keeps 0 and 3), crowded
    assert by_strategy["cooperative-sticky"].groups_with_idle == 1
    assert list(by_strategy)[0] == "legacy (today)" and by_strategy["legacy (today)"].groups == 3
    # crowded: c owns both partitions that legacy range gives to a and b: owned twice, attention 2
    assert [(g.group, g.attention) for g in summary.attention] == [("broken", 3), ("crowded", 2)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.jsonl", "out"]  # no staging directory left
    assert sorted(p.name for p in out.iterdir()) == ["groups", "strategies", "summary.html"]
    assert sorted(p.name for p in (out / "groups").iterdir()) == ["part-00000.parquet", "part-00001.parquet"]

    page = (out / "summary.html").read_text()
    assert_offline(page)
    dom = dump_dom(out / "summary.html")
    body = re.search(r"<body[^>]*>", dom)[0]
    assert 'data-rendered="ok"' in body and 'data-charts="4"' in body and 'data-attention-rows="2"' in body, body


@pytest.mark.parametrize("content", ["", "garbage\n{}\n"])
def test_unusable_snapshot_leaves_nothing(spark, tmp_path, content):
    snapshot = tmp_path / "s.jsonl"
    snapshot.write_text(content)
    with pytest.raises(UsageError, match="is empty|holds no group"):
        run_fleet_job(spark, [str(snapshot)], str(tmp_path / "out"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_existing_output_is_refused(spark, tmp_path):
    snapshot = tmp_path / "s.jsonl"
    snapshot.write_text(encode(FLEET[0]) + "\n")
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match="already exists"):
        run_fleet_job(spark, [str(snapshot)], str(tmp_path / "out"))

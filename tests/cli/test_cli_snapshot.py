"""``zkconsumer snapshot`` against a real ZooKeeper holding hand-made groups: what each line records (registrations,
owners, offsets, partition counts, malformed znodes), the group filter, and the synthetic fleet."""

from __future__ import annotations

import json

from zkconsumer import cli
from zkconsumer.fleet.snapshot import decode


def topic(zk, name: str, partitions: int) -> None:
    data = {"version": 1, "partitions": {str(p): [1] for p in range(partitions)}}
    zk.create(f"/brokers/topics/{name}", json.dumps(data).encode(), makepath=True)


def register(zk, group: str, consumer: str, subscription: dict, pattern: str = "static") -> None:
    data = {"version": 1, "subscription": subscription, "pattern": pattern, "timestamp": "1"}
    zk.create(f"/consumers/{group}/ids/{consumer}", json.dumps(data).encode(), makepath=True)


def test_snapshot_of_hand_made_groups(zk, zk_chroot, tmp_path, capsys):
    topic(zk, "orders", 4)
    topic(zk, "orders-eu", 2)
    register(zk, "g1", "g1_a", {"orders": 2})
    register(zk, "g1", "g1_b", {"orders.*": 1}, pattern="white_list")
    for p, owner in ((0, "g1_a-0"), (1, "g1_a-1"), (2, "g1_gone-0")):
        zk.create(f"/consumers/g1/owners/orders/{p}", owner.encode(), makepath=True)
    zk.create("/consumers/g1/offsets/orders/0", b"42", makepath=True)
    zk.create("/consumers/g1/offsets/orders/1", b"-1", makepath=True)
    register(zk, "g2", "g2_a", {"orders": 1})
    zk.create("/consumers/g2/ids/g2_bad", b"not json")
    zk.create("/consumers/g2/offsets/orders/3", b"forty", makepath=True)
    zk.ensure_path("/consumers/skipped/ids")
    out = tmp_path / "fleet.jsonl"

    assert cli.main(["snapshot", "--zookeeper", zk_chroot, "--output", str(out), "--groups", "g[0-9]"]) == 0
    assert "wrote 2 groups" in capsys.readouterr().err
    g1, g2 = (decode(line) for line in out.read_text().splitlines())

    assert (g1.group, g1.registered, g1.consistent, g1.offsets_storage) == ("g1", ("g1_a", "g1_b"), True, "zookeeper")
    a, b = g1.members
    assert (a.pattern, dict(a.subscription), dict(a.streams)) == ("static", {"orders": 2}, {"orders": 2})
    assert (b.pattern, dict(b.subscription), dict(b.streams)) == ("white_list", {"orders.*": 1},
                                                                 {"orders": 1, "orders-eu": 1})
    assert dict(g1.partitions) == {"orders": 4, "orders-eu": 2}
    assert [(o.partition, o.thread) for o in g1.owners] == [(0, "g1_a-0"), (1, "g1_a-1"), (2, "g1_gone-0")]
    assert [(o.partition, o.offset) for o in g1.offsets] == [(0, 42), (1, -1)]
    assert g1.malformed == ()

    # the malformed registration is recorded, still registered, not fatal; so is the malformed offset
    assert g2.registered == ("g2_a", "g2_bad") and [m.consumer_id for m in g2.members] == ["g2_a"]
    assert sorted(m.path for m in g2.malformed) == ["/consumers/g2/ids/g2_bad", "/consumers/g2/offsets/orders/3"]
    assert g2.offsets == () and g2.offsets_storage == "none"


def test_synthetic_fleet_is_deterministic_and_filtered(tmp_path, capsys):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert cli.main(["snapshot", "--synthetic", "200", "--seed", "7", "--output", str(one)]) == 0
    assert cli.main(["snapshot", "--synthetic", "200", "--seed", "7", "--output", str(two),
                     "--groups", "group-00[0-9]"]) == 0
    lines = one.read_text().splitlines()
    assert len(lines) == 200 and two.read_text().splitlines() == lines[:10]
    records = [decode(line) for line in lines]
    assert all(len(r.registered) >= 1 for r in records)
    assert {r.offsets_storage for r in records} == {"zookeeper", "both", "kafka", "none"}
    # some groups carry the planted problems: a dead member's owners
    assert any(o.thread.rsplit("-", 1)[0] not in r.registered for r in records for o in r.owners)


def test_snapshot_bad_input_is_one_line(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert cli.main(["snapshot", "--synthetic", "1", "--groups", "(", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("zkconsumer snapshot: --groups '(' is not a valid regex") and err.count("\n") == 1
    assert not out.exists()

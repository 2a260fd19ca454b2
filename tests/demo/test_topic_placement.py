"""``demo --topic-placement``: the demo topic on a 3-broker, 2-rack cluster as kafka-topics.sh --zookeeper placed it."""

from __future__ import annotations

import re

from support import zkconsumer_cli

from zkconsumer.demo.topic_placement import placement_lines


def rows(lines: list[str]) -> dict[str, tuple[int, list[int], list[str], bool]]:
    """partition -> (leader, replicas, racks, added later) from the view's table."""
    found = {}
    for line in lines:
        m = re.match(r"^  (demo-\d+)\s+(\d+)\s+([\d,]+)\s+([\w,-]+)(\s+\(added later.*)?$", line)
        if m:
            found[m.group(1)] = (int(m.group(2)), [int(b) for b in m.group(3).split(",")], m.group(4).split(","),
                                 m.group(5) is not None)
    return found


def test_the_lesson_places_a_copy_in_each_rack_and_spreads_the_leaders():
    table = rows(placement_lines("demo", 4, added=2))
    assert list(table) == [f"demo-{p}" for p in range(6)]
    # Kafka's rack-aware walk from start index 0 over the rack-alternated brokers 1, 3, 2
    assert {p: (leader, replicas) for p, (leader, replicas, _, _) in table.items()} == {
        "demo-0": (1, [1, 3]), "demo-1": (3, [3, 2]), "demo-2": (2, [2, 3]),
        "demo-3": (1, [1, 3]), "demo-4": (3, [3, 2]), "demo-5": (2, [2, 3]),
    }
    assert all(sorted(racks) == ["rack-a", "rack-b"] for _, _, racks, _ in table.values())
    assert [p for p, row in table.items() if row[3]] == ["demo-4", "demo-5"]


def test_the_demo_option_needs_no_server(tmp_path):
    result = zkconsumer_cli("demo", "--topic-placement", "--topic", "orders", "--partitions", "3",
                            env={"ZKCONSUMER_RUN_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Where topic 'orders' (3 partitions, replication factor 2)")
    assert "  orders-4 " in result.stdout  # the two partitions scene 5 adds
    assert not any(tmp_path.iterdir())  # no environment was started

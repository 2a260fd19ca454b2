"""Java's ``HashMap``/``HashSet`` iteration order and Kafka's ``Uuid``, as the server-side assignors need them.

The fixed cases were printed by OpenJDK 17's ``HashSet``; where a JDK is on the machine, a further test
compiles a small Java program and checks several hundred generated sets (plain buckets, buckets that
make a small table double, tree buckets) against it.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from itertools import product
from pathlib import Path

import pytest
from time_scale import bounded

from zkconsumer.assignors.group_spec import (
    SpecMember,
    hash_set_order_of_ids,
    members_map_order,
    subscribed_ids_order,
    target_from_record,
)
from zkconsumer.assignors.java_hash_map import (
    JavaHashMap,
    capacity_for_collection,
    compare_ints,
    integer_set_order,
    string_set_order,
    table_size_for,
)
from zkconsumer.assignors.topic_ids import TopicIdError, Uuid, generated_topic_id


def test_plain_buckets_iterate_by_bucket_then_insertion() -> None:
    assert integer_set_order([17, 3]) == [17, 3]  # both in bucket 1 of 16: insertion order
    assert integer_set_order([20, 3, 1]) == [1, 3, 20]
    assert string_set_order(["b", "a", "c"]) == ["a", "b", "c"]  # hashes 98, 97, 99


def test_a_ninth_entry_in_a_bucket_of_a_small_table_doubles_the_table() -> None:
    # Ten partitions at a stride of 16 share bucket 3 of a 16-bucket table; the ninth doubles it to 32.
    assert integer_set_order([3 + 16 * i for i in range(10)]) == [3, 35, 67, 99, 131, 19, 51, 83, 115, 147]


def test_a_tree_bucket_iterates_its_root_first() -> None:
    values = [5 + 64 * i for i in reversed(range(12))]
    assert integer_set_order(values) == [517, 709, 645, 581, 453, 389, 325, 261, 197, 133, 69, 5]
    colliding = ["".join(p) for p in product(["Aa", "BB"], repeat=4)]  # one String.hashCode for all
    order = string_set_order(colliding, from_collection=False)
    assert order == ["AaAaBBBB", *[s for s in colliding if s != "AaAaBBBB"]]


def test_table_sizes() -> None:
    assert [table_size_for(n) for n in (0, 1, 2, 3, 16, 17)] == [1, 1, 2, 4, 16, 32]
    assert [capacity_for_collection(n) for n in (0, 12, 13, 24, 25)] == [16, 32, 32, 64, 64]


def test_uuid_text_hash_and_order() -> None:
    uuid = Uuid.parse("T1-A4s3VTwiI5CTbEp6POw")
    assert str(Uuid.parse(str(uuid))) == str(uuid)
    assert uuid.java_hash() == 0x18F0640A
    assert Uuid(-1, 0) < Uuid(0, -5) < Uuid(0, 3)  # signed halves, most significant first
    for bad in ("", "short", "T1-A4s3VTwiI5CTbEp6POw-too-long", "!!!!!!!!!!!!!!!!!!!!!!"):
        with pytest.raises(TopicIdError):
            Uuid.parse(bad)


def test_generated_topic_ids_are_stable_and_usable() -> None:
    ids = [generated_topic_id(f"topic-{i}") for i in range(200)]
    assert ids == [generated_topic_id(f"topic-{i}") for i in range(200)]
    assert len(set(ids)) == 200
    assert all(len(str(u)) == 22 and not u.reserved for u in ids)


def test_coordinator_orders() -> None:
    t1, t2 = Uuid.parse("T1-A4s3VTwiI5CTbEp6POw"), Uuid.parse("T2-B4s3VTwiI5YHbPp6YUe")
    assert members_map_order(["c", "a", "b"]) == ["a", "b", "c"]
    assert subscribed_ids_order(["t1", "ghost", "t2"], {"t1": t1, "t2": t2}) == (t1, t2)
    # bucket 1 (t2) before bucket 10 (t1); partitions 17 and 3 share bucket 1
    assert target_from_record([(t1, [2, 0]), (t2, [17, 3])]) == ((t2, (17, 3)), (t1, (0, 2)))


def test_a_subscription_copied_into_a_hash_set_is_sized_by_its_names() -> None:
    # Hashes 17 and 33 share bucket 1 of 16 buckets but not of 32: 13 subscribed names (11 of them not
    # resolvable to an id) size the copy at 32 buckets, and the order flips.
    ids = (Uuid(0, 17), Uuid(0, 33))
    assert hash_set_order_of_ids(SpecMember("m", ids)) == list(ids)
    assert hash_set_order_of_ids(SpecMember("m", ids, subscription_size=13)) == list(reversed(ids))


_JAVA = """
import java.util.*;
public class Orders {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        while (in.hasNextLine()) {
            String[] parts = in.nextLine().trim().split(" ");
            boolean fromCollection = parts[0].endsWith("c");
            List<Object> values = new ArrayList<>();
            for (int i = 1; i < parts.length; i++) {
                values.add(parts[0].startsWith("int") ? (Object) Integer.valueOf(parts[i]) : parts[i]);
            }
            Set<Object> set = fromCollection ? new HashSet<>(values) : new HashSet<>();
            if (!fromCollection) set.addAll(values);
            StringBuilder out = new StringBuilder(parts[0]);
            for (Object v : set) out.append(' ').append(v);
            System.out.println(out);
        }
    }
}
"""


def _cases(rng: random.Random) -> list[tuple[str, list]]:
    cases: list[tuple[str, list]] = []
    for _ in range(600):
        kind = rng.choice(["intc", "inta", "strc", "stra"])
        size = rng.choice([rng.randint(1, 20), rng.randint(9, 80), rng.randint(50, 300)])
        if kind.startswith("int"):
            stride = rng.choice([1, 7, 16, 32, 64, 100, 128, 256])
            base = rng.randint(0, 300)
            values: list = list(dict.fromkeys([base + stride * i for i in range(size)]
                                              + [rng.randint(0, 70000) for _ in range(rng.randint(0, 5))]))
            rng.shuffle(values)
        elif rng.random() < 0.5:
            values = list(dict.fromkeys("".join(rng.choice(["Aa", "BB"]) for _ in range(rng.randint(3, 7)))
                                        + rng.choice(["", "x", "y"]) for _ in range(size)))
        else:
            values = list(dict.fromkeys(f"m{rng.randint(0, 100000)}" for _ in range(size)))
        cases.append((kind, values))
    return cases


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="needs a JDK")
@pytest.mark.timeout(150)  # its waits: 60 s to compile, 60 s to run (together a few seconds in fact)
def test_orders_match_the_jdk(tmp_path: Path) -> None:
    (tmp_path / "Orders.java").write_text(_JAVA)
    subprocess.run(["javac", "Orders.java"], cwd=tmp_path, check=True, timeout=bounded(60))
    cases = _cases(random.Random(31))
    stdin = "".join(f"{kind} {' '.join(map(str, values))}\n" for kind, values in cases)
    jdk = subprocess.run(["java", "-cp", str(tmp_path), "Orders"], input=stdin, capture_output=True, text=True,
                         check=True, timeout=bounded(60)).stdout.splitlines()
    ours = []
    for kind, values in cases:
        order = (integer_set_order if kind.startswith("int") else string_set_order)(values, kind.endswith("c"))
        ours.append(" ".join([kind, *map(str, order)]))
    assert ours == jdk


def test_an_integer_sets_order_without_the_map_is_the_maps_order() -> None:
    """The direct order (a stable sort by bucket) against the map built node by node, on sets whose buckets collide
    (strides of the table's size, values past 65,535 that the hash's high half moves), with duplicates, and on sets
    with buckets past the treeify threshold: tree bins (64 buckets and more), whose order the direct way takes from
    a map of that bucket's keys alone, and a small table's doubling, where it steps aside."""
    rng = random.Random(848)
    for _ in range(400):
        size = rng.choice([rng.randint(0, 20), rng.randint(9, 300), rng.randint(500, 3000)])
        stride = rng.choice([1, 7, 16, 64, 256, 1024, 65536])
        values = [rng.randint(0, 300) + stride * i for i in range(size)]
        values += [rng.randint(0, 200_000) for _ in range(rng.randint(0, 20))] + values[:rng.randint(0, 3)]
        rng.shuffle(values)
        built = JavaHashMap[int](lambda v: v, compare_ints, capacity_for_collection(len(values))).put_all(values)
        assert integer_set_order(values) == built.in_order(), (stride, size)


def test_tree_bins_of_a_large_set_are_ordered_as_in_the_whole_map() -> None:
    """Members' partitions as a coordinator's storm leaves them: tens to hundreds, several at a stride of the table
    size, so that some buckets hold 9 to 40 keys (tree bins) among plain ones."""
    rng = random.Random(1848)
    trees = 0
    for _ in range(300):
        capacity = rng.choice([64, 128, 256, 1024])
        plain = [rng.randint(0, 120_000) for _ in range(rng.randint(0, capacity // 2))]
        crowded = [rng.randint(0, capacity - 1) + capacity * rng.randint(0, 200) for _ in range(rng.randint(9, 40))]
        values = sorted(plain + crowded) if rng.random() < 0.5 else plain + crowded
        built = JavaHashMap[int](lambda v: v, compare_ints, capacity_for_collection(len(values))).put_all(values)
        trees += built.in_order() != sorted(set(values), key=lambda v: ((v ^ (v >> 16)) & (capacity_for_collection(
            len(values)) - 1)))
        assert integer_set_order(values) == built.in_order()
    assert trees > 100  # most sets had a tree bin, whose order is not a plain bucket's

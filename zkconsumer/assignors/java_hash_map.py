"""The iteration order of Java's ``HashMap`` and ``HashSet``, tree bins included.

Kafka's group coordinator walks its members map, a member's subscribed topic ids and a member's target
assignment through ``HashMap``/``HashSet`` iteration, and the server-side uniform assignor hands out
partitions in that order; matching Kafka member for member needs the same order here.

Java visits buckets by index (``spread(hashCode) & (capacity - 1)``, ``spread(h) = h ^ (h >>> 16)``)
and, within a bucket, follows the bucket's linked list, which is insertion order for a plain bucket.
The table starts at 16 buckets (or ``tableSizeFor`` of a requested capacity) and doubles once it holds
more than 0.75 of its capacity; doubling splits each bucket in two without reordering it.

A bucket that reaches 9 entries is "treeified": in a table smaller than 64 the table doubles instead
(so a small set of colliding keys has a larger capacity than its size alone predicts); from 64 on, the
bucket becomes a red-black tree whose root is moved to the front of the bucket's list and whose later
entries are linked right after their tree parent. Integer keys collide that way as soon as a member
holds nine or more partitions of one topic at a stride of the table size (every 16th, every 64th
partition), which the uniform assignor's heterogeneous path produces in ordinary groups, so this module
emulates both behaviours exactly rather than only the plain buckets. Only insertion is modelled:
every structure whose order Kafka's assignors depend on is built by insertions.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from zkconsumer.assignors.java_hash import java_string_hash, java_string_key

K = TypeVar("K", bound=Hashable)

DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64
_MAX_CAPACITY = 1 << 30


def _signed(h: int) -> int:
    h &= 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def spread(hash_code: int) -> int:
    """``HashMap.hash``: the high half folded into the low half, as a signed int."""
    h = hash_code & 0xFFFFFFFF
    return _signed(h ^ (h >> 16))


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above ``capacity`` (at least 1)."""
    if capacity <= 1:
        return 1
    return min(1 << (capacity - 1).bit_length(), _MAX_CAPACITY)


def capacity_for_collection(size: int) -> int:
    """Initial table of ``new HashSet<>(collection)``/``new HashMap<>(map)``: ``max(size / .75 + 1, 16)``."""
    return table_size_for(max(int(size / 0.75) + 1, DEFAULT_CAPACITY))


def compare_ints(a: int, b: int) -> int:
    return (a > b) - (a < b)


def compare_strings(a: str, b: str) -> int:
    """``String.compareTo`` (UTF-16 code units)."""
    ka, kb = java_string_key(a), java_string_key(b)
    return (ka > kb) - (ka < kb)


@dataclass(eq=False, slots=True)
class _Node(Generic[K]):
    key: K
    hash: int
    parent: _Node[K] | None = None
    left: _Node[K] | None = None
    right: _Node[K] | None = None
    red: bool = False


@dataclass(slots=True)
class _Bin(Generic[K]):
    nodes: list[_Node[K]] = field(default_factory=list)  # the bucket's linked list, in order
    root: _Node[K] | None = None  # set when the bucket is a tree


class JavaHashMap(Generic[K]):
    """The keys of a ``java.util.HashMap`` (or ``HashSet``) in iteration order, built by insertions.

    ``hash_code`` is the key's Java ``hashCode``; ``compare`` its ``compareTo`` (tree buckets order keys
    of equal hash by it; every key type used here is ``Comparable``).
    """

    def __init__(
        self,
        hash_code: Callable[[K], int],
        compare: Callable[[K, K], int],
        initial_capacity: int | None = None,
    ) -> None:
        self._hash_code = hash_code
        self._compare = compare
        # Java allocates the table on the first insertion with this many buckets.
        self._pending = DEFAULT_CAPACITY if initial_capacity is None else table_size_for(initial_capacity)
        self._table: list[_Bin[K] | None] = []
        self._size = 0
        self._present: set[K] = set()

    @property
    def capacity(self) -> int:
        return len(self._table) or self._pending

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._present

    def put(self, key: K) -> None:
        """``put``/``add``; a key already present keeps its place."""
        if key in self._present:
            return
        if not self._table:
            self._table = [None] * self._pending
        h = spread(self._hash_code(key))
        index = h & (len(self._table) - 1)
        bucket = self._table[index]
        node = _Node(key, h)
        self._present.add(key)
        if bucket is None:
            self._table[index] = _Bin([node])
        elif bucket.root is not None:
            self._put_tree(bucket, node)
        else:
            bucket.nodes.append(node)
            if len(bucket.nodes) > _TREEIFY_THRESHOLD:
                self._treeify_bin(index)
        self._size += 1
        if self._size > self._threshold():
            self._resize()

    def put_all(self, keys: Iterable[K]) -> JavaHashMap[K]:
        for key in keys:
            self.put(key)
        return self

    def in_order(self) -> list[K]:
        """Iteration order: buckets by index, each bucket's list in order."""
        return [node.key for bucket in self._table if bucket is not None for node in bucket.nodes]

    def _threshold(self) -> int:
        return int(len(self._table) * 0.75)

    def _treeify_bin(self, index: int) -> None:
        if len(self._table) < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        bucket = self._table[index]
        if bucket is not None:
            self._treeify(bucket)

    def _resize(self) -> None:
        old = self._table
        old_capacity = len(old)
        if old_capacity >= _MAX_CAPACITY:
            return
        table: list[_Bin[K] | None] = [None] * (old_capacity * 2)
        for j, bucket in enumerate(old):
            if bucket is None:
                continue
            low = [n for n in bucket.nodes if not n.hash & old_capacity]
            high = [n for n in bucket.nodes if n.hash & old_capacity]
            for target, nodes, other in ((j, low, high), (j + old_capacity, high, low)):
                if not nodes:
                    continue
                split = _Bin(nodes)
                if bucket.root is not None and len(nodes) > _UNTREEIFY_THRESHOLD:
                    if other:
                        self._treeify(split)
                    else:
                        split.root = bucket.root  # the whole tree moved over unchanged
                table[target] = split
        self._table = table

    # -- tree buckets (HashMap.TreeNode) ------------------------------------------------------------

    def _direction(self, node: _Node[K], other: _Node[K]) -> int:
        if other.hash > node.hash:
            return -1
        if other.hash < node.hash:
            return 1
        return self._compare(node.key, other.key)

    def _treeify(self, bucket: _Bin[K]) -> None:
        root: _Node[K] | None = None
        for x in bucket.nodes:
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
                continue
            p = root
            while True:
                direction = self._direction(x, p)
                child = p.left if direction <= 0 else p.right
                if child is None:
                    x.parent = p
                    if direction <= 0:
                        p.left = x
                    else:
                        p.right = x
                    root = _balance_insertion(root, x)
                    break
                p = child
        bucket.root = root
        _move_root_to_front(bucket)

    def _put_tree(self, bucket: _Bin[K], x: _Node[K]) -> None:
        root = p = bucket.root
        assert root is not None and p is not None
        while True:
            direction = self._direction(x, p)
            child = p.left if direction <= 0 else p.right
            if child is None:
                if direction <= 0:
                    p.left = x
                else:
                    p.right = x
                x.parent = p
                bucket.nodes.insert(bucket.nodes.index(p) + 1, x)
                bucket.root = _balance_insertion(root, x)
                _move_root_to_front(bucket)
                return
            p = child


def _move_root_to_front(bucket: _Bin) -> None:
    root = bucket.root
    if root is not None and bucket.nodes[0] is not root:
        bucket.nodes.remove(root)
        bucket.nodes.insert(0, root)


_OTHER_SIDE = {"left": "right", "right": "left"}


def _rotate(root: _Node, p: _Node, side: str) -> _Node:
    """``rotateLeft`` (``side="left"``: ``p``'s right child rises) or its mirror ``rotateRight``."""
    rising = _OTHER_SIDE[side]
    r = getattr(p, rising)
    if r is None:
        return root
    inner = getattr(r, side)
    setattr(p, rising, inner)
    if inner is not None:
        inner.parent = p
    r.parent = p.parent
    if r.parent is None:
        root = r
        r.red = False
    elif r.parent.left is p:
        r.parent.left = r
    else:
        r.parent.right = r
    setattr(r, side, p)
    p.parent = r
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    """``TreeNode.balanceInsertion``, step for step: which node ends up root decides the bucket's order.
    Java spells out the parent-is-a-left-child case and its mirror; ``side`` is the parent's side."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        side = "left" if xp is xpp.left else "right"
        other = _OTHER_SIDE[side]
        uncle = getattr(xpp, other)
        if uncle is not None and uncle.red:
            uncle.red = False
            xp.red = False
            xpp.red = True
            x = xpp
            continue
        if x is getattr(xp, other):
            x = xp
            root = _rotate(root, x, side)
            xp = x.parent
            xpp = None if xp is None else xp.parent
        if xp is not None:
            xp.red = False
            if xpp is not None:
                xpp.red = True
                root = _rotate(root, xpp, other)


# -- the structures Kafka's coordinator builds -------------------------------------------------------


def integer_set_order(values: Sequence[int], from_collection: bool = True) -> list[int]:
    """A ``HashSet<Integer>``'s order: ``new HashSet<>(values)`` or, with ``from_collection=False``,
    ``new HashSet<>()`` filled one by one. ``Integer.hashCode`` is the value itself."""
    if from_collection and (order := _integer_set_order_direct(values)) is not None:
        return order
    capacity = capacity_for_collection(len(values)) if from_collection else None
    return JavaHashMap[int](_int_hash, compare_ints, capacity).put_all(values).in_order()


def _integer_set_order_direct(values: Sequence[int]) -> list[int] | None:
    """``new HashSet<>(values)``'s order without building the map, or None where that takes the map: its table is
    sized for the collection, so it never resizes, and a bucket holding no more than the treeify threshold is a
    list, so the order is the buckets' (by index), each in insertion order: a stable sort by bucket. A bucket past
    the threshold is a tree bin (from 64 buckets on; a smaller table doubles instead, which the map is left to do),
    whose order the map gives for that bucket's keys alone. A coordinator orders every member's partitions this way
    at every new target (1,000 members joining 100,000 partitions: 10^8 puts)."""
    unique = list(dict.fromkeys(values))
    if not unique:
        return unique
    mask = capacity_for_collection(len(values)) - 1
    if min(unique) >= 0 and max(unique) <= 0x7FFFFFFF:
        # the bucket of each, mapped by C functions rather than a Python expression per value: a partition number
        # is a non-negative int, whose spread is v ^ (v >> 16)
        buckets = list(map(mask.__and__, map(operator.xor, unique, map((16).__rrshift__, unique))))
    else:
        buckets = [((v & 0xFFFFFFFF) ^ ((v & 0xFFFFFFFF) >> 16)) & mask for v in unique]
    counts = Counter(buckets)
    crowded = sorted(b for b, count in counts.items() if count > _TREEIFY_THRESHOLD)
    if crowded and mask + 1 < _MIN_TREEIFY_CAPACITY:
        return None  # the table doubles instead of treeifying: the map knows the order
    order = list(map(unique.__getitem__, sorted(range(len(unique)), key=buckets.__getitem__)))
    if crowded:
        # a tree bin's order depends only on the keys in it and their insertion order (the stable sort's run of its
        # bucket): the map is built for each crowded bucket's keys alone, at the same capacity (so in the same
        # bucket, and never resized)
        by_bucket = sorted(buckets)
        for bucket in crowded:
            start = bisect_left(by_bucket, bucket)
            end = start + counts[bucket]
            order[start:end] = JavaHashMap[int](_int_hash, compare_ints, mask + 1).put_all(order[start:end]).in_order()
    return order


def string_set_order(values: Sequence[str], from_collection: bool = True) -> list[str]:
    """A ``HashSet<String>``'s (or a ``HashMap<String, ?>``'s keys') order, as :func:`integer_set_order`."""
    capacity = capacity_for_collection(len(values)) if from_collection else None
    return JavaHashMap[str](java_string_hash, compare_strings, capacity).put_all(values).in_order()


def _int_hash(value: int) -> int:
    return value

"""Java's string hashing, string ordering and HashMap iteration order, in Python.

Kafka's assignors leak these JVM details into their results: the legacy round-robin assignor sorts
partitions by ``String.hashCode``, and the modern sticky assignors iterate ``HashMap``s keyed by member
id, so who wins a tie depends on bucket order. Reproducing them here is what lets our assignments match
Kafka's list for list instead of only up to ties.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

_MASK = 0xFFFFFFFF


def _to_signed(h: int) -> int:
    return h - 0x100000000 if h & 0x80000000 else h


def java_string_hash(s: str, seed: int = 0) -> int:
    """``String.hashCode`` as a signed 32-bit int.

    Java hashes UTF-16 code units, so characters outside the BMP count as two (a surrogate pair);
    ``seed`` continues the hash of a prefix, which lets callers hash ``"[topic," + digits`` without
    rehashing the topic for every partition.
    """
    h = seed & _MASK
    if s.isascii():
        for ch in s:
            h = (31 * h + ord(ch)) & _MASK
    else:
        units = s.encode("utf-16-be")
        for i in range(0, len(units), 2):
            h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK
    return _to_signed(h)


def java_string_key(s: str) -> bytes:
    """Sort key that orders strings like ``String.compareTo`` (UTF-16 code units).

    Python compares code points, which differs from Java only once a string holds a character outside
    the BMP: its surrogates sort below U+E000..U+FFFF in Java.
    """
    return s.encode("utf-16-be")


def java_key_for(strings: Collection[str]) -> Callable[[str], str | bytes]:
    """A sort key for these strings in Java order: the strings themselves unless one needs encoding.

    Encoding every key costs time on hot paths, and the plain string sorts identically as long as no
    string has an astral character; mixing the two kinds of key in one sort would fail, hence one choice
    for the whole collection.
    """
    if all(_bmp_only(s) for s in strings):
        return _identity
    return java_string_key


def _identity(s: str) -> str:
    return s


def java_sorted(strings: Iterable[str]) -> list[str]:
    """Strings in ``String.compareTo`` order."""
    items = list(strings)
    return sorted(items, key=java_key_for(items))


def _bmp_only(s: str) -> bool:
    return s.isascii() or all(ord(ch) <= 0xFFFF for ch in s)


def _spread(h: int) -> int:
    """``HashMap.hash``: the high half is folded into the low half before masking to a bucket."""
    h &= _MASK
    return h ^ (h >> 16)


def hashmap_capacity(size: int, capacity: int = 16) -> int:
    """Table size of a default-constructed ``HashMap`` after ``size`` insertions (resize at 0.75 load)."""
    while size > capacity * 0.75:
        capacity *= 2
    return capacity


def java_hashmap_order(keys: Sequence[str], hashes: Sequence[int] | None = None) -> list[str]:
    """The order in which a ``new HashMap<>()`` filled with ``keys`` (in that order) iterates them.

    Buckets are visited by index and a bucket keeps insertion order (resizes split buckets without
    reordering). Buckets that Java turns into trees (more than 8 colliding keys in a table of 64 or more)
    are not emulated; they need pathological member ids.
    """
    if hashes is None:
        hashes = [java_string_hash(k) for k in keys]
    mask = hashmap_capacity(len(keys)) - 1
    order = sorted(range(len(keys)), key=lambda i: _spread(hashes[i]) & mask)
    return [keys[i] for i in order]


def first_in_hash_order(hashes: Iterable[int], capacity: int) -> int:
    """Index of the element a ``HashSet`` of that capacity yields first (ties: insertion order)."""
    mask = capacity - 1
    best_index = -1
    best_bucket = capacity
    for i, h in enumerate(hashes):
        bucket = _spread(h) & mask
        if bucket < best_bucket:
            best_index, best_bucket = i, bucket
    return best_index


def topic_partition_hash(topic_hash: int, partition: int) -> int:
    """``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()`` in int arithmetic."""
    return _to_signed((31 * (31 + partition) + topic_hash) & _MASK)

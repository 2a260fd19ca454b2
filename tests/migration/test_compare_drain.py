"""When the run stops waiting for deliveries: everything produced arrived, or every partition's last message did
(members consume a partition in order, so what is missing before it is lost, not late). Pure."""

from __future__ import annotations

from zkconsumer.migration.measures import Identity, Produced, identity
from zkconsumer.migration.run import _last_delivered


def test_a_partition_s_last_message_delivered_means_what_is_missing_before_it_is_lost():
    produced = [Produced("p:0", 0, 1, 0), Produced("p:1", 1, 1, 0), Produced("p:2", 0, 1, 1), Produced("p:3", 1, 1, 1)]
    ids = identity(produced)  # by (partition, offset): every delivery report gave its offset
    assert _last_delivered(produced, {(0, 1), (1, 1)}, ids)  # p:0 and p:1 are lost: nothing will bring them any more
    assert not _last_delivered(produced, {(0, 0), (1, 0), (0, 1)}, ids)  # partition 1's last may still come
    assert not _last_delivered([], set(), ids)
    # read back from files: no offset to go by
    assert not _last_delivered([Produced("p:0", 0, 1)], {"p:0"}, Identity(by_offset=False))

"""When the run stops waiting for deliveries: everything produced arrived, or every partition's last message did
(members consume a partition in order, so what is missing before it is lost, not late). Pure."""

from __future__ import annotations

from zkconsumer.migration.measures import Produced
from zkconsumer.migration.run import _last_delivered


def test_a_partition_s_last_message_delivered_means_what_is_missing_before_it_is_lost():
    produced = [Produced("p:0", 0, 1, 0), Produced("p:1", 1, 1, 0), Produced("p:2", 0, 1, 1), Produced("p:3", 1, 1, 1)]
    assert _last_delivered(produced, {"p:2", "p:3"})  # p:0 and p:1 are lost: nothing will bring them any more
    assert not _last_delivered(produced, {"p:0", "p:1", "p:2"})  # partition 1's last may still come
    assert not _last_delivered([], set())
    assert not _last_delivered([Produced("p:0", 0, 1)], {"p:0"})  # read back from files: no offset to go by

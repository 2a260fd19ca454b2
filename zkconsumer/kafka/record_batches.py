"""Record batches (magic 2) built and read with kafka-python's ``kafka.record``: the one builder every writer of
batches shares (the front's up-conversion of old message sets, its group store's writes)."""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder

#: kafka-python's "no compression", for both of its builders
UNCOMPRESSED = 0
#: a record batch's "no producer": not idempotent, not transactional
_NO_PRODUCER = -1
#: no size limit: a writer bounds what it appends itself
_NO_LIMIT = 1 << 62


def batch_builder() -> DefaultRecordBatchBuilder:
    """A record batch (magic 2) to append records to: uncompressed, of no producer (neither idempotent nor
    transactional), without a size limit."""
    return DefaultRecordBatchBuilder(2, UNCOMPRESSED, False, _NO_PRODUCER, _NO_PRODUCER, _NO_PRODUCER, _NO_LIMIT)


def record_bytes(value: bytes | memoryview | None) -> bytes | None:
    """A record's key or value as bytes (kafka-python's reader gives memoryviews)."""
    return None if value is None else bytes(value)


__all__ = ["UNCOMPRESSED", "batch_builder", "record_bytes"]

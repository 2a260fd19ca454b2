"""Topic config values checked as Kafka 0.10.0.1's LogConfig did, before anything is written: a broker that cannot
parse a topic's config fails to create its log."""

from __future__ import annotations

import pytest

from zkconsumer.admin.replica_placement import AdminOperationError
from zkconsumer.admin.topic_plans import LOG_CONFIG_NAMES, check_config_value, parse_config_options


@pytest.mark.parametrize(("item", "message"), [
    ("retention.ms=abc", "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ("segment.bytes=3000000000", "Invalid value 3000000000 for configuration segment.bytes: Not a number of type INT"),
    ("segment.bytes=10", "Invalid value 10 for configuration segment.bytes: Value must be at least 14"),
    ("min.insync.replicas=0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ("cleanup.policy=compact,delete", "Invalid value compact,delete for configuration cleanup.policy: String must "
     "be one of: compact, delete"),
    ("compression.type=zstd", "String must be one of: uncompressed, snappy, lz4, gzip, producer"),
    ("preallocate=yes", "Expected value to be either true or false"),
    ("min.cleanable.dirty.ratio=1.5", "Value must be no more than 1"),
    ("min.cleanable.dirty.ratio=x", "Not a number of type DOUBLE"),
    ("message.timestamp.type=Now", "String must be one of: CreateTime, LogAppendTime"),
])
def test_a_bad_value_is_refused_with_kafkas_message(item, message):
    with pytest.raises(AdminOperationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config_options([item])


def test_good_values_are_kept_as_given():
    items = ["retention.ms=-1", "cleanup.policy=compact", "compression.type=lz4", "preallocate=TRUE",
             "min.cleanable.dirty.ratio=0.5", "segment.bytes=1073741824", "message.format.version=0.10.0"]
    assert parse_config_options(items) == dict(item.split("=") for item in items)


def test_every_config_name_has_a_rule():
    for name in LOG_CONFIG_NAMES:  # a name without a rule would raise KeyError here
        with pytest.raises(AdminOperationError):
            check_config_value(name, "not a value at all, surely")

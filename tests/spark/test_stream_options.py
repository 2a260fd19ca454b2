"""The streaming source's options, pure: names without case as Spark passes them, every value a string, each bad
option refused in one line naming it, the legacy keys checked as ConsumerConfig checks them. No Spark session."""

from __future__ import annotations

import pickle

import pytest

from zkconsumer.spark.options import (
    EARLIEST,
    GROUP,
    MEMBER,
    NONE,
    SPECIFIC,
    InvalidOptionError,
    parse_options,
)
from zkconsumer.types import TopicPartition

BASE = {"zookeeper.connect": "zk:2181/chroot", "group.id": "g1", "topics": "a,b"}


def test_defaults_and_case_insensitive_names():
    options = parse_options({"ZooKeeper.Connect": "zk:2181", "GROUP.ID": "g1", "Topics": " a , b ,a"})
    assert options.zookeeper_connect == "zk:2181" and options.group_id == "g1"
    assert options.subscription.topics == ("a", "b")
    assert options.starting.kind == GROUP and options.auto_offset_reset == "largest"
    assert options.membership == MEMBER and options.streams == 1
    assert options.max_offsets_per_trigger is None and options.min_partitions is None
    assert options.bootstrap_servers is None


def test_every_option_given():
    options = parse_options({**BASE, "startingOffsets": "EARLIEST", "auto.offset.reset": "smallest",
                             "maxOffsetsPerTrigger": "500", "minPartitions": "4", "membership": "None",
                             "streams": "2", "bootstrap.servers": "h1:9092, h2:9093",
                             "partition.assignment.strategy": "roundrobin", "consumer.id": "spark1"})
    assert options.starting.kind == EARLIEST and options.auto_offset_reset == "smallest"
    assert (options.max_offsets_per_trigger, options.min_partitions, options.streams) == (500, 4, 2)
    assert options.membership == NONE and options.bootstrap_servers == "h1:9092,h2:9093"
    config = options.consumer_config()
    assert config.partition_assignment_strategy == "roundrobin" and config.consumer_id == "spark1"
    assert config.auto_commit_enable is False  # the source commits itself
    assert pickle.loads(pickle.dumps(options)) == options  # Spark ships the source to its workers


def test_whitelist_and_blacklist_are_the_legacy_filters():
    white = parse_options({**BASE, "topics": "", "whitelist": "orders.*, audit"}).subscription
    assert white.allows("orders-eu") and white.allows("audit") and not white.allows("other")
    black = parse_options({**BASE, "topics": None, "blacklist": "internal.*"}).subscription
    assert black.allows("orders") and not black.allows("internal-x") and not black.allows("__consumer_offsets")


def test_starting_offsets_json():
    options = parse_options({**BASE, "startingOffsets": '{"b": {"1": 7, "0": -2}, "a": {"0": -1}}'})
    assert options.starting.kind == SPECIFIC
    assert options.starting.positions == {TopicPartition("a", 0): -1, TopicPartition("b", 0): -2,
                                          TopicPartition("b", 1): 7}


@pytest.mark.parametrize(("given", "named"), [
    ({"group.id": None}, "option group.id is required"),
    ({"zookeeper.connect": " "}, "option zookeeper.connect is required"),
    ({"topics": None}, "option topics, whitelist or blacklist: exactly one is required (given: none of them)"),
    ({"whitelist": "x"}, "exactly one is required (given: topics and whitelist)"),
    ({"topics": "a,b c"}, "option topics: illegal topic name 'b c'"),
    ({"topics": None, "blacklist": "(x"}, "option blacklist: (x is an invalid regex"),
    ({"startingOffsets": "newest"}, "option startingOffsets='newest': expected group, earliest, latest or JSON"),
    ({"startingOffsets": '{"c": {"0": 1}}'}, "topic 'c' is not in the subscription (a,b)"),
    ({"startingOffsets": '{"a": {"x": 1}}'}, "partition 'x' of topic 'a' is not a partition number"),
    ({"startingOffsets": '{"a": {"0": -3}}'}, "offset -3 of a-0 must be a whole number >= -2"),
    ({"maxOffsetsPerTrigger": "lots"}, "option maxOffsetsPerTrigger='lots': expected a whole number"),
    ({"maxOffsetsPerTrigger": "0"}, "option maxOffsetsPerTrigger='0': must be at least 1"),
    ({"minPartitions": "-1"}, "option minPartitions='-1': must be at least 1"),
    ({"streams": "two"}, "option streams='two': expected a whole number"),
    ({"membership": "observer"}, "option membership='observer': must be one of member, none"),
    ({"bootstrap.servers": "host"}, "option bootstrap.servers: 'host' is not HOST:PORT"),
    ({"bootstrap.servers": ","}, "option bootstrap.servers is empty"),
    ({"auto.offset.reset": "earliest"}, "option auto.offset.reset='earliest': must be one of smallest, largest"),
    ({"group.id": "g 1"}, "option group.id='g 1': only a-z A-Z 0-9 . _ - are allowed"),
    ({"zookeeper.session.timeout.ms": "soon"}, "option zookeeper.session.timeout.ms='soon': expected a whole number"),
    ({"auto.commit.enable": "true"}, "option auto.commit.enable=true: the source commits offsets itself"),
    ({"offsets.storage": "kafka"}, "option offsets.storage=kafka is not supported"),
])
def test_a_bad_option_is_refused_naming_it(given, named):
    with pytest.raises(InvalidOptionError) as caught:
        parse_options({**BASE, **given})
    message = str(caught.value)
    assert named in message
    assert "\n" not in message

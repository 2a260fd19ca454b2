"""The leaders of some partitions, from the real embedded broker's Metadata answer of every topic: the partitions
asked for and no others, each with the broker that leads it."""

from __future__ import annotations

from zkconsumer.kafka.metadata import admin_client, fetch_leaders, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition


def test_only_the_partitions_asked_for_come_back_each_with_its_leader(broker_bootstrap, topic_name):
    create_topic(broker_bootstrap, topic_name, 4)
    admin = admin_client(broker_bootstrap)
    snapshot = fetch_metadata(admin, broker_bootstrap)
    asked = [TopicPartition(topic_name, 1), TopicPartition(topic_name, 3), TopicPartition(topic_name, 9),
             TopicPartition(f"{topic_name}-missing", 0)]
    leaders = fetch_leaders(admin, broker_bootstrap, asked)
    assert set(leaders) == {asked[0], asked[1]}  # no partition 9, no such topic: no leader, not an error
    for tp, broker in leaders.items():
        assert broker == snapshot.brokers[snapshot.topics[topic_name].partitions[tp.partition].leader]

"""The old API versions the front answers itself, as Kafka 0.10 answered them, for the ZooKeeper-era clients:
:mod:`.legacy_versions` (Produce v0-v2, Fetch v0-v3, ListOffsets v0, OffsetCommit and OffsetFetch v0),
:mod:`.message_formats` (record batches down-converted to message sets and back) and :mod:`.zookeeper_offsets`
(offsets of version 0 in ZooKeeper). Plugged into the proxy by the composition
(:mod:`zkconsumer.front.command_line`)."""

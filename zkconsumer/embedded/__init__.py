"""The embedded environment: a real ZooKeeper and a real Kafka-protocol broker started by the project.

Used by the test fixtures, the benchmarks, the demo and ``zkconsumer local``; nothing here is a fake.
"""

"""zkconsumer: Kafka's legacy ZooKeeper-coordinated high-level consumer, reimplemented in Python."""

__version__ = "0.1.0"

"""``zkconsumer produce``, the console producer, run as a user runs it, against the real servers: what it sends is
what ``consume`` prints, and a message the broker cannot take is an error naming it."""

from __future__ import annotations

import json

from support import mirrored_topic, zkconsumer_cli


def test_lines_become_messages_with_their_keys(zk, kafka_zk, bootstrap_servers, topic_name, tmp_path):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    lines = tmp_path / "lines.txt"
    lines.write_text("alice:one\nbob:two\nalice:three\n")
    sent = zkconsumer_cli("produce", "--bootstrap-server", bootstrap_servers, "--topic", topic, "--file", str(lines),
                          "--key-separator", ":")
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout == ""
    assert sent.stderr.strip().splitlines() == [f"delivered 3 messages to {topic}"]
    read = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", topic, "--from-beginning",
                          "--max-messages", "3", "--json")
    assert read.returncode == 0, read.stderr
    rows = [json.loads(line) for line in read.stdout.splitlines()]
    assert sorted((r["key"], r["value"]) for r in rows) == [("alice", "one"), ("alice", "three"), ("bob", "two")]
    # One key, one partition: alice's two messages in the order sent.
    alice = [r for r in rows if r["key"] == "alice"]
    assert len({r["partition"] for r in alice}) == 1 and [r["value"] for r in alice] == ["one", "three"]


def test_stdin_to_one_partition_and_json_outcome(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    sent = zkconsumer_cli("produce", "--bootstrap-server", bootstrap_servers, "--topic", topic, "--partition", "1",
                          "--json", input="x\ny\n")
    assert sent.returncode == 0, sent.stderr
    assert json.loads(sent.stdout) == {"topic": topic, "delivered": 2, "failures": []}
    read = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", topic, "--from-beginning",
                          "--max-messages", "2", "--json")
    assert [(json.loads(line)["partition"], json.loads(line)["value"]) for line in read.stdout.splitlines()] == [
        (1, "x"), (1, "y")]


def test_undeliverable_messages_are_named_and_fail(bootstrap_servers, topic_name):
    from zkconsumer.kafka.topics import create_topic

    create_topic(bootstrap_servers, topic_name, 2)
    lost = zkconsumer_cli("produce", "--bootstrap-server", bootstrap_servers, "--topic", topic_name,
                          "--partition", "5", "--delivery-timeout-ms", "3000", input="a\nb\n")
    assert lost.returncode == 1
    lines = lost.stderr.strip().splitlines()
    assert lines[-1].startswith("zkconsumer produce: 2 of 2 messages not delivered: line 1: ")
    assert f"{topic_name} partition 5" in lines[-1] and "line 2" in lines[-1]
    assert "Traceback" not in lost.stderr
    missing = zkconsumer_cli("produce", "--bootstrap-server", bootstrap_servers, "--topic", "no-such-topic-x",
                             input="a\n")
    assert missing.returncode == 1 and missing.stderr.strip().splitlines() == [
        f"zkconsumer produce: topic 'no-such-topic-x' does not exist at {bootstrap_servers}; create it first "
        f"(zkconsumer topics create no-such-topic-x --partitions N)"]
    unkeyed = zkconsumer_cli("produce", "--bootstrap-server", bootstrap_servers, "--topic", topic_name,
                             "--key-separator", ":", input="k:v\nno separator\n")
    assert unkeyed.returncode == 2 and unkeyed.stderr.strip().splitlines() == [
        "zkconsumer produce: line 2: no key separator ':' (expected KEY:VALUE)"]

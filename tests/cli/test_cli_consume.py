"""``zkconsumer consume``, the console consumer, run as a user runs it, against the real servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families
from support import mirrored_topic, produce, zkconsumer_cli
from time_scale import bounded, scaled


def test_consumes_exactly_what_it_prints_and_resumes_there(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [f"m{i}".encode() for i in range(5)])
    first = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--group", "console", "--topic", topic,
                           "--from-beginning", "--max-messages", "3", "--format", "json")
    assert first.returncode == 0, first.stderr
    rows = [json.loads(line) for line in first.stdout.splitlines()]
    assert [(r["partition"], r["offset"], r["value"]) for r in rows] == [(0, 0, "m0"), (0, 1, "m1"), (0, 2, "m2")]
    assert "Processed a total of 3 messages" in first.stderr
    assert zk.get(f"/consumers/console/offsets/{topic}/0")[0] == b"3"
    second = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--group", "console", "--topic", topic,
                            "--timeout-ms", "1500")
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == ["m3", "m4"]
    assert zk.get(f"/consumers/console/offsets/{topic}/0")[0] == b"5"
    assert zk.get_children("/consumers/console/ids") == []



def test_from_beginning_with_committed_offsets_needs_delete_consumer_offsets(zk, kafka_zk, bootstrap_servers,
                                                                          topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [b"a", b"b"])
    read = ("consume", "--zookeeper", kafka_zk, "--group", "again", "--topic", topic, "--from-beginning",
            "--max-messages", "2")
    assert zkconsumer_cli(*read).returncode == 0
    refused = zkconsumer_cli(*read)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == ["zkconsumer consume: Found previous offset information for this group "
                                           "again. Please use --delete-consumer-offsets to delete previous offsets "
                                           "metadata"]
    assert zk.get(f"/consumers/again/offsets/{topic}/0")[0] == b"2"  # nothing written or deleted
    live = zk.create("/consumers/again/ids/again_live", b"{}", ephemeral=True)
    busy = zkconsumer_cli(*read, "--delete-consumer-offsets")
    assert busy.returncode == 1 and "has live members" in busy.stderr
    assert zk.exists(f"/consumers/again/offsets/{topic}/0")
    zk.delete(live)
    again = zkconsumer_cli(*read, "--delete-consumer-offsets")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["a", "b"]
    assert zk.get(f"/consumers/again/offsets/{topic}/0")[0] == b"2"

def test_ctrl_c_leaves_the_group_with_offsets_committed(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    produce(bootstrap_servers, topic, [b"a", b"b"], partition=0)
    produce(bootstrap_servers, topic, [b"c"], partition=1)
    process = subprocess.Popen(
        [sys.executable, "-m", "zkconsumer", "consume", "--zookeeper", kafka_zk, "--group", "ctrlc", "--whitelist",
         f"{topic}.*", "--streams", "2", "--from-beginning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )
    lines = [process.stdout.readline().strip() for _ in range(3)]
    assert sorted(lines) == ["a", "b", "c"]
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=bounded(30))
    assert process.returncode == 0, err
    assert "Processed a total of 3 messages" in err
    assert zk.get(f"/consumers/ctrlc/offsets/{topic}/0")[0] == b"2"
    assert zk.get(f"/consumers/ctrlc/offsets/{topic}/1")[0] == b"1"
    assert zk.get_children("/consumers/ctrlc/ids") == []


def test_bad_arguments_are_one_line_errors(kafka_zk):
    bad = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", "t", "--property", "nonsense")
    assert bad.returncode == 2 and bad.stderr.strip().endswith("expected KEY=VALUE")
    assert "Traceback" not in bad.stderr
    # A refused port answers at once, well before the 30 s connection timeout asked for.
    started = time.monotonic()
    down = zkconsumer_cli("consume", "--zookeeper", "127.0.0.1:1", "--topic", "t",
                          "--property", "zookeeper.connection.timeout.ms=30000")
    assert time.monotonic() - started < scaled(15)
    assert down.returncode == 1 and down.stderr.strip().splitlines() == [
        "zkconsumer consume: ZooKeeper at 127.0.0.1:1 did not answer: 127.0.0.1:1 refused the connection (nothing "
        "listens there); check the address, or start the embedded environment with `zkconsumer local up`"]
    bad_port = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", "t", "--metrics-port", "70000")
    assert bad_port.returncode == 2 and bad_port.stderr.strip().splitlines() == [
        "zkconsumer consume: config metrics.http.port=70000: must be at most 65535"]
    missing = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", "no-such-topic", "--timeout-ms", "100")
    assert missing.returncode == 1 and missing.stderr.strip().splitlines() == [
        f"zkconsumer consume: topic 'no-such-topic' does not exist (no znode /brokers/topics/no-such-topic at "
        f"{kafka_zk}); create it first, or use --whitelist to wait for it"]


def test_metrics_port_serves_the_running_consumer(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [b"x", b"yy"])
    process = subprocess.Popen(
        [sys.executable, "-m", "zkconsumer", "--log-level", "warning", "consume", "--zookeeper", kafka_zk, "--group",
         "scraped-cli", "--topic", topic, "--from-beginning", "--metrics-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )
    try:
        url = process.stderr.readline().strip().removeprefix("metrics: ")
        assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics"), url
        assert [process.stdout.readline().strip() for _ in range(2)] == ["x", "yy"]
        with urllib.request.urlopen(url, timeout=bounded(10)) as answer:
            families = {f.name: f for f in text_string_to_metric_families(answer.read().decode())}
        [messages] = families["kafka_consumer_messages"].samples
        assert (messages.labels, messages.value) == ({"client_id": "scraped-cli", "topic": topic}, 2)
        [owned] = families["kafka_consumer_owned_partitions"].samples
        assert owned.value == 1
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=bounded(30))
    assert process.returncode == 0, err


def test_json_and_its_older_spelling_print_the_same(zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [b"x0", b"x1"])
    printed = {}
    for group, output in (("as-json", ["--json"]), ("as-format", ["--format", "json"]),
                          ("as-text", ["--format", "text"]), ("default", [])):
        done = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--group", group, "--topic", topic,
                              "--from-beginning", "--max-messages", "2", *output)
        assert done.returncode == 0, done.stderr
        printed[group] = done.stdout
    assert printed["as-json"] == printed["as-format"]
    assert [json.loads(line)["value"] for line in printed["as-json"].splitlines()] == ["x0", "x1"]
    assert printed["as-text"] == printed["default"] == "x0\nx1\n"
    both = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", topic, "--json", "--format", "text")
    assert both.returncode == 2 and both.stderr.splitlines()[-1].endswith(
        "argument --format: not allowed with argument --json")


def test_properties_are_the_users_and_checked(zk, kafka_zk, bootstrap_servers, topic_name, capfd):
    """A --property is never overwritten: group.id and consumer.timeout.ms (the idle time that ends the run, as in
    Kafka's console consumer) are used as given; a bad value or a disagreeing option is one line naming the key."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [b"only"])
    done = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", topic, "--from-beginning",
                          "--property", "group.id=from-property", "--property", "consumer.timeout.ms=1000")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["only"]
    assert zk.get(f"/consumers/from-property/offsets/{topic}/0")[0] == b"1"
    # Refused before the consumer starts (in-process: nothing is installed by then).
    from zkconsumer.cli import main

    refusals = {
        ("--property", "consumer.timeout.ms=abc"): "config consumer.timeout.ms='abc': expected a whole number",
        ("--group", "g1", "--property", "group.id=g2"): "--property group.id=g2 and --group disagree; give one of them",
        ("--timeout-ms", "500", "--property", "consumer.timeout.ms=900"):
            "--property consumer.timeout.ms=900 and --timeout-ms 500 disagree; give one of them",
    }
    for given, problem in refusals.items():
        assert main(["consume", "--zookeeper", kafka_zk, "--topic", topic, *given]) == 2
        assert capfd.readouterr().err.splitlines() == [f"zkconsumer consume: {problem}"]

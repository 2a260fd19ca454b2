"""The command line keeps the terminal for what was asked: a console consumer run prints its messages and Kafka's
closing line, its events go to the log file; ``--verbose`` brings them back to stderr."""

from __future__ import annotations

import json

from support import mirrored_topic, produce, zkconsumer_cli


def test_a_console_consumer_run_prints_only_its_messages(zk, kafka_zk, bootstrap_servers, topic_name, tmp_path):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic, [b"one", b"two"])
    env = {"ZKCONSUMER_RUN_DIR": str(tmp_path / "run"), "ZKCONSUMER_LOG_FILE": "", "ZKCONSUMER_LOG_LEVEL": "",
           "ZKCONSUMER_LOG_JSON": ""}
    quiet = zkconsumer_cli("consume", "--zookeeper", kafka_zk, "--topic", topic, "--from-beginning",
                           "--max-messages", "2", env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.splitlines() == ["one", "two"]
    assert quiet.stderr.splitlines() == ["Processed a total of 2 messages"]
    log = (tmp_path / "run" / "zkconsumer.log").read_text()  # the run directory's
    assert "consumer.connected" in log and "rebalance.completed" in log
    verbose = zkconsumer_cli("--verbose", "consume", "--zookeeper", kafka_zk, "--topic", topic, "--from-beginning",
                             "--max-messages", "2", env=env)
    assert verbose.returncode == 0, verbose.stderr
    assert verbose.stdout.splitlines() == ["one", "two"]
    assert "[info     ] consumer.connected" in verbose.stderr
    as_json = zkconsumer_cli("--log-file", str(tmp_path / "run.log"), "--log-json", "consume", "--zookeeper", kafka_zk,
                             "--topic", topic, "--from-beginning", "--max-messages", "1", env=env)
    assert as_json.stderr.splitlines() == ["Processed a total of 1 messages"]
    events = [json.loads(line)["event"] for line in (tmp_path / "run.log").read_text().splitlines()]
    assert "consumer.connected" in events


def test_an_unwritable_log_file_costs_the_events_not_the_command(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("")  # a file where the log's directory should be
    done = zkconsumer_cli("--log-file", str(blocked / "zkconsumer.log"), "topics", "place", "--brokers", "0",
                          "--partitions", "1", "--replication-factor", "1")
    assert done.returncode == 0
    assert done.stderr.splitlines() == [f"warning: cannot write the log file {blocked / 'zkconsumer.log'}; only "
                                        f"warnings are shown"]

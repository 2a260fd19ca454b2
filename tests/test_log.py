"""Events as a library emits them: silent unless the application asks, through its logging or structlog set-up."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
import textwrap

import pytest
import structlog
from structlog.testing import capture_logs
from support import REPO, produce, wait_for
from time_scale import bounded

from zkconsumer.kafka.topics import create_topic
from zkconsumer.log import configure_logging, get_logger


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_unconfigured_events_go_to_the_standard_library_logger_of_their_module() -> None:
    handler = Records()
    stdlib = logging.getLogger("zkconsumer.test_log")
    stdlib.addHandler(handler)
    stdlib.setLevel(logging.INFO)
    try:
        log = get_logger("zkconsumer.test_log").bind(group="g")
        log.debug("test.hidden", n=1)
        log.info("test.shown", partitions=[{"topic": "t", "partition": 0}], note="two words")
    finally:
        stdlib.removeHandler(handler)
        stdlib.setLevel(logging.NOTSET)
    [record] = handler.records
    assert (record.name, record.levelno) == ("zkconsumer.test_log", logging.INFO)
    assert record.getMessage() == ("test.shown group=g partitions=\"[{'topic': 't', 'partition': 0}]\" "
                                   "note=\"two words\"")
    assert record.event_dict == {"event": "test.shown", "group": "g",  # type: ignore[attr-defined]
                                 "partitions": [{"topic": "t", "partition": 0}], "note": "two words"}
    assert record.funcName == "test_unconfigured_events_go_to_the_standard_library_logger_of_their_module"


def test_a_filtered_event_is_never_built() -> None:
    """Under the command line's configuration a debug event below the level never reaches a processor; unconfigured,
    never reaches the standard library's record."""
    configure_logging(level="info", stream=io.StringIO())
    seen: list[str] = []

    def spy(_logger, _method, event_dict):
        seen.append(event_dict["event"])
        return event_dict

    structlog.get_config()["processors"].insert(0, spy)  # the list bound loggers hold, as capture_logs edits it
    log = get_logger("zkconsumer.test_log")
    log.debug("test.filtered")
    log.info("test.kept")
    assert seen == ["test.kept"]
    assert log.is_enabled_for(logging.INFO) and not log.is_enabled_for(logging.DEBUG)


def test_a_logger_follows_a_new_structlog_configuration() -> None:
    """A logger keeps what it assembled from structlog's configuration: configure_logging drops that at once, and a
    configuration the application makes itself is followed from the next event emitted."""
    first = io.StringIO()
    configure_logging(json=True, level="info", stream=first)
    log = get_logger("zkconsumer.test_log")
    log.debug("test.filtered")
    second = io.StringIO()
    configure_logging(json=True, level="debug", stream=second, force=True)
    log.debug("test.shown")
    assert first.getvalue() == ""
    assert [json.loads(line)["event"] for line in second.getvalue().splitlines()] == ["test.shown"]
    captured = structlog.testing.LogCapture()
    structlog.configure(processors=[captured])
    log.info("test.captured", n=1)
    assert captured.entries == [{"event": "test.captured", "n": 1, "log_level": "info"}]
    assert second.getvalue().count("\n") == 1


def test_capture_logs_sees_events_of_loggers_made_before_it() -> None:
    log = get_logger("zkconsumer.test_log").bind(consumer_id="c")
    log.warning("test.before")  # resolved unconfigured first
    with capture_logs() as captured:
        log.info("test.captured", n=2)
    assert captured == [{"consumer_id": "c", "n": 2, "event": "test.captured", "log_level": "info"}]


def test_the_command_line_renders_json_lines_for_events_and_other_libraries() -> None:
    out = io.StringIO()
    configure_logging(json=True, level="debug", stream=out)
    get_logger("zkconsumer.test_log").bind(group="g").debug("test.json", offset=3)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["event"], e["level"], e["group"], e["offset"]) for e in lines] == [("test.json", "debug", "g", 3)]
    assert lines[0]["timestamp"].endswith("Z")
    err = io.StringIO()
    root_handler = logging.getLogger().handlers[-1]
    assert isinstance(root_handler, logging.StreamHandler)
    root_handler.setStream(err)
    logging.getLogger("kazoo.client").info("below warning: hidden")
    logging.getLogger("kazoo.client").warning("Connection dropped: %s", "socket error")
    [foreign] = [json.loads(line) for line in err.getvalue().splitlines()]
    assert (foreign["event"], foreign["level"], foreign["logger"]) == (
        "Connection dropped: socket error", "warning", "kazoo.client")


APPLICATION = textwrap.dedent("""
    import logging, sys
    from zkconsumer.consumer.zookeeper_consumer_connector import create_connector
    from zkconsumer.errors import ConsumerTimeoutException

    zookeeper, topic, count, configure = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if configure == "debug":
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s %(message)s")
    connector = create_connector({"zookeeper.connect": zookeeper, "group.id": "app-" + configure,
                                  "auto.offset.reset": "smallest", "consumer.timeout.ms": 200})
    got = 0
    try:
        stream = connector.create_message_streams({topic: 1})[topic][0]
        while got < count:
            try:
                for _ in stream:
                    got += 1
                    if got == count:
                        break
            except ConsumerTimeoutException:
                pass
    finally:
        connector.shutdown()
    print("consumed", got)
""")


def run_application(tmp_path, kafka_zk: str, topic: str, configure: str) -> subprocess.CompletedProcess:
    script = tmp_path / "app.py"
    script.write_text(APPLICATION)
    return subprocess.run([sys.executable, str(script), kafka_zk, topic, "3", configure], capture_output=True,
                          text=True, timeout=bounded(60), cwd=REPO)


@pytest.mark.timeout(160)  # its waits, summed: 15 s for the topic, 2 x 60 s for the application
def test_an_application_that_configures_nothing_sees_nothing(tmp_path, zk, kafka_zk, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/0/state"))
    produce(bootstrap_servers, topic_name, [b"a", b"b", b"c"])
    quiet = run_application(tmp_path, kafka_zk, topic_name, "nothing")
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == ("consumed 3\n", "")
    # The same application with logging at debug sees every event, through its own format.
    loud = run_application(tmp_path, kafka_zk, topic_name, "debug")
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout == "consumed 3\n"
    assert "INFO zkconsumer.connector consumer.connected " in loud.stderr
    assert "INFO zkconsumer.connector rebalance.completed " in loud.stderr
    assert "DEBUG zkconsumer." in loud.stderr  # the data path's debug events (one per chunk fetched, today)


def test_with_a_file_events_go_there_and_only_warnings_to_the_stream(tmp_path) -> None:
    """The command line's quiet mode: every event from the level up in the file (opened at the first event), the
    stream kept for warnings and errors."""
    log_file = tmp_path / "events.log"
    stream = io.StringIO()
    configure_logging(json=True, level="debug", stream=stream, file=log_file)
    assert not log_file.exists()
    log = get_logger("zkconsumer.test_log")
    log.debug("test.detail", n=1)
    log.info("test.progress", n=2)
    log.warning("test.trouble", n=3)
    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [(e["event"], e["level"], e["n"]) for e in events] == [
        ("test.detail", "debug", 1), ("test.progress", "info", 2), ("test.trouble", "warning", 3)]
    assert [json.loads(line)["event"] for line in stream.getvalue().splitlines()] == ["test.trouble"]

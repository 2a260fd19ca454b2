"""A committed offset beyond the end of the log (the broker lost its log, a topic was recreated) resets by
``auto.offset.reset`` as on Kafka, although the embedded broker answers such a fetch with nothing instead of
OFFSET_OUT_OF_RANGE: the fetcher compares the position with the true end of the log. Against the real servers."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs
from support import connector_config, mirrored_topic, produce, take, wait_for

from zkconsumer import create_connector
from zkconsumer.zk import paths

COMMITTED = 50  # far beyond the three messages the log holds


@pytest.mark.parametrize("policy", ["smallest", "largest"])
def test_an_offset_past_the_log_end_resets_once_and_new_messages_arrive(zk, kafka_zk, bootstrap_servers, topic_name,
                                                                         policy):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [b"old0", b"old1", b"old2"], partition=0)
    config = connector_config(kafka_zk, "past-end", **{"auto.offset.reset": policy})
    offset_path = paths.GroupTopicDirs(config.group_id, topic=topic).offset_path(0)
    zk.create(offset_path, str(COMMITTED).encode(), makepath=True)
    with capture_logs() as events, create_connector(config) as connector:
        stream = connector.create_message_streams({topic: 1})[topic][0]
        wait_for(lambda: [e for e in events if e["event"] == "fetcher.offset_reset"])
        produce(bootstrap_servers, topic, [b"new0", b"new1"], partition=0)
        expected = [b"old0", b"old1", b"old2", b"new0", b"new1"] if policy == "smallest" else [b"new0", b"new1"]
        got = take(stream, len(expected))
        assert [m.message for m in got] == expected
        assert [m.offset for m in got] == list(range(5 - len(expected), 5))
        connector.commit_offsets()
        assert int(zk.get(offset_path)[0]) == 5
    resets = [e for e in events if e["event"] == "fetcher.offset_reset"]
    assert len(resets) == 1
    (reset,) = resets
    assert reset["log_level"] == "warning"
    assert (reset["topic"], reset["partition"], reset["reason"], reset["policy"]) == (topic, 0, "past_log_end", policy)
    assert (reset["old_offset"], reset["new_offset"]) == (COMMITTED, 0 if policy == "smallest" else 3)

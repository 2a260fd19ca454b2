"""The fields that several events carry with one meaning, each declared once here (in :mod:`zkconsumer.events.spec`'s
terms) and named by the areas' declarations as ``shared.TOPIC``: a field read across events (a partition's ``topic``,
a step's ``duration_ms``) is one declaration. A field only one event carries is declared in that event's line.

Related fields are declared together, a line each group, the names in the order of their fields.
"""

from __future__ import annotations

from zkconsumer.events.spec import BOOL, INT, LIST, NULL, NUMBER, STR
from zkconsumer.events.spec import Field as F

# a partition, its offsets and the messages read
TOPIC, PARTITION, PARTITIONS = F("topic", STR), F("partition", INT), F("partitions", LIST)
PARTITIONS_PAST_END = F("partitions", LIST, "with `position`, `log_end`")
FETCH_OFFSET, OLD_OFFSET, NEW_OFFSET = F("fetch_offset", INT), F("old_offset", INT), F("new_offset", INT)
POLICY = F("policy", STR, "`smallest`, `largest`")
OFFSETS_WITH_OFFSET, OFFSETS_WITH_THEIRS = F("offsets", LIST, "with `offset`"), F("offsets", LIST, "with `theirs`")
AUTO_COMMIT, STORE_KAFKA = F("auto_commit", BOOL), F("store", STR, "`kafka`")
STREAM, MESSAGES, ROWS = F("stream", STR), F("messages", INT), F("rows", INT)
SUBSCRIPTION, STARTING = F("subscription", STR), F("starting", STR)

# ZooKeeper and the brokers
ZOOKEEPER, SESSION_ID, PATH, PROBLEM = F("zookeeper", STR), F("session_id", STR), F("path", STR), F("problem", STR)
BOOTSTRAP, BROKER_ID = F("bootstrap", STR), F("broker_id", INT)
REGISTRATION = F("registration", STR, "the JSON written")

# a member: its process, its threads, its group
CONSUMER_ID, PID, RETURNCODE = F("consumer_id", STR), F("pid", INT), F("returncode", INT)
THREAD, THREAD_ON_START = F("thread", STR), F("thread", STR, "on start")
GROUP, PROTOCOL, STRATEGY = F("group", STR), F("protocol", STR), F("strategy", STR)

# a group of the front and its members
MEMBER_ID, OLD_MEMBER_ID, NEW_MEMBER_ID = F("member_id", STR), F("old_member_id", STR), F("new_member_id", STR)
MEMBER_IDS = F("members", LIST, "member ids, in join order")
CLIENT_ID = F("client_id", STR, "the name the member is shown under")
INSTANCE_ID, GROUP_INSTANCE_ID = F("instance_id", STR | NULL), F("group_instance_id", STR | NULL)
LEADER_MEMBER, GENERATION = F("leader", STR), F("generation", INT)
GROUP_EPOCH, ASSIGNMENT_EPOCH, MEMBER_EPOCH = F("group_epoch", INT), F("assignment_epoch", INT), F("member_epoch", INT)
FROM_EPOCH = F("from", INT)
SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS = F("session_timeout_ms", INT), F("rebalance_timeout_ms", INT)

# what happened, and how long it took
ATTEMPT, ATTEMPTS, FAILURES_IN_A_ROW = F("attempt", INT), F("attempts", INT), F("failures_in_a_row", INT)
STEP_2, SCENE, TITLE, NOTE = F("step", INT, "2"), F("scene", INT), F("title", STR), F("note", STR)
FROM, REASON = F("from", STR), F("reason", STR)
ERROR, ERROR_TYPE_AND_MESSAGE = F("error", STR), F("error", STR, "the exception's type and message")
DURATION_MS = F("duration_ms", NUMBER)
DURATION_SINCE_SHUTTING_DOWN = F("duration_ms", NUMBER, "since `consumer.shutting_down`")
WAITED_MS, DOWN_MS = F("waited_ms", NUMBER), F("down_ms", NUMBER)

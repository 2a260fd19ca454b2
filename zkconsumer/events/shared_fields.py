"""The fields that the events of several areas carry with one meaning, each declared once here (in
:mod:`zkconsumer.events.spec`'s terms) and named in the areas' declarations, so that a field read across areas (a
partition's ``topic``, a step's ``duration_ms``) is one declaration. A field repeated within one area only is named in
that area's module.
"""

from __future__ import annotations

from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, STR
from zkconsumer.events.spec import Field as F

# where: a partition, a znode, a server
TOPIC = F("topic", STR)
PARTITION = F("partition", INT)
PATH = F("path", STR)
ZOOKEEPER = F("zookeeper", STR)
BOOTSTRAP = F("bootstrap", STR)
SESSION_ID = F("session_id", STR)

# who, and what happened
CONSUMER_ID = F("consumer_id", STR)
GROUP = F("group", STR)
PROTOCOL = F("protocol", STR)
STRATEGY = F("strategy", STR)
SCENE = F("scene", INT)
ATTEMPT = F("attempt", INT)
FROM = F("from", STR)
REASON = F("reason", STR)
PROBLEM = F("problem", STR)
NOTE = F("note", STR)
ERROR = F("error", STR)
ERROR_TYPE_AND_MESSAGE = F("error", STR, "the exception's type and message")

# how long
DURATION_MS = F("duration_ms", NUMBER)
DURATION_SINCE_SHUTTING_DOWN = F("duration_ms", NUMBER, "since `consumer.shutting_down`")
DOWN_MS = F("down_ms", NUMBER)

# offsets
AUTO_COMMIT = F("auto_commit", BOOL)
STORE_KAFKA = F("store", STR, "`kafka`")
OFFSETS_WITH_OFFSET = F("offsets", LIST, "with `offset`")
OFFSETS_WITH_THEIRS = F("offsets", LIST, "with `theirs`")
POLICY = F("policy", STR, "`smallest`, `largest`")
OLD_OFFSET = F("old_offset", INT)
NEW_OFFSET = F("new_offset", INT)

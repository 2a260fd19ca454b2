"""Kafka's rules for topic names (Kafka's ``kafka.common.Topic``). Pure.

One rule for every way a topic is made here: through the broker's admin API (:mod:`zkconsumer.kafka.topics`) and
through ZooKeeper (:mod:`zkconsumer.admin.zk_topics`). A name the broker would refuse must be refused before
anything is asked or written, and a name written straight into ``/brokers/topics`` is checked nowhere else: a
ZooKeeper-mode controller would create the partitions of a topic that no client can then name.

The collision rule exists because Kafka's metric names replace ``.`` by ``_``: two topics differing only there
report under one name, so creating the second is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from zkconsumer.errors import UsageError

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(name: str) -> None:
    """Refuse a name Kafka's ``Topic.validate`` refuses, saying which rule it breaks."""
    if not name:
        reason = "it is empty"
    elif name in {".", ".."}:
        reason = "'.' and '..' are not topic names"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"it is longer than {MAX_NAME_LENGTH} characters"
    elif not _LEGAL.fullmatch(name):
        reason = "it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return
    raise UsageError(f"illegal topic name {name!r}: {reason}")


def has_collision_chars(name: str) -> bool:
    """A name with ``.`` or ``_`` may collide with another in metric names (Kafka's ``Topic.hasCollisionChars``)."""
    return "." in name or "_" in name


def has_collision(a: str, b: str) -> bool:
    """The two names are one in metric names (Kafka's ``Topic.hasCollision``)."""
    return a.replace(".", "_") == b.replace(".", "_")


def colliding_topics(name: str, existing: Iterable[str]) -> list[str]:
    """The existing topics ``name`` would collide with, itself excluded, in the order given."""
    if not has_collision_chars(name):
        return []
    return [other for other in existing if other != name and has_collision(name, other)]

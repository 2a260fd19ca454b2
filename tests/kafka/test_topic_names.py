"""Kafka's topic name rules (``kafka.common.Topic``), shared by the broker path and the ZooKeeper path."""

from __future__ import annotations

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.kafka.topic_names import colliding_topics, has_collision, has_collision_chars, validate_topic_name


@pytest.mark.parametrize(("name", "reason"), [
    ("", "it is empty"),
    (".", "'.' and '..' are not topic names"),
    ("..", "'.' and '..' are not topic names"),
    ("x" * 250, "it is longer than 249 characters"),
    ("a b", "it contains a character other than ASCII alphanumerics"),
    ("caf\u00e9", "it contains a character other than ASCII alphanumerics"),
    ("ok\n", "it contains a character other than ASCII alphanumerics"),
])
def test_illegal_names_say_which_rule_they_break(name, reason):
    with pytest.raises(UsageError, match="illegal topic name") as raised:
        validate_topic_name(name)
    assert reason in str(raised.value)


def test_legal_names_pass():
    for name in ("a", "x" * 249, "A.b_c-9", "..."):
        validate_topic_name(name)


def test_collisions_are_dots_against_underscores():
    assert has_collision_chars("a.b") and has_collision_chars("a_b") and not has_collision_chars("a-b")
    assert has_collision("a.b_c", "a_b.c") and not has_collision("a.b", "a-b")
    assert colliding_topics("a_b", ["a.b", "a_b", "a-b", "a__b"]) == ["a.b"]
    assert colliding_topics("ab", ["ab", "a.b"]) == []

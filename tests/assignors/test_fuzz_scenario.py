"""The assign scenario JSON, fuzzed: a Scenario or a ScenarioError, and a small valid scenario is assigned by its
strategy without another exception."""

from __future__ import annotations

import contextlib
import json

from fuzzing import FUZZ, JSON_VALUES, NASTY_TEXT, mutated
from hypothesis import given
from hypothesis import strategies as st

from zkconsumer.assignors import registry
from zkconsumer.assignors.scenario import ScenarioError, parse_scenario
from zkconsumer.errors import ZkConsumerError

VALID = {"strategy": "range", "partitions": {"t": 4, "u": 2},
         "members": {"c1": {"streams": {"t": 1}}, "c2": {"topics": ["t", "u"], "owned": [["t", 0]]}}}
MEMBER = {"streams": {"t": 2}, "topics": ["t"], "owned": [["t", 1]], "generation": 3}
TOPIC_IDS = {"t": "T1-A4s3VTwiI5CTbEp6POw", "u": "T2-B4s3VTwiI5YHbPp6YUe"}


@FUZZ
@given(st.one_of(
    NASTY_TEXT, st.text(max_size=30), JSON_VALUES.map(json.dumps),
    mutated(VALID).map(json.dumps),
    mutated(MEMBER).map(lambda m: json.dumps({**VALID, "members": {"c9": m}})),
    st.sampled_from(["sticky", "roundrobin", "legacy-range", "consumer-uniform", "consumer-range", "nope", 7]).map(
        lambda s: json.dumps({**VALID, "strategy": s})),
    mutated({**VALID, "strategy": "consumer-uniform", "topic_ids": TOPIC_IDS}).map(json.dumps),
))
def test_any_scenario_parses_or_is_invalid_and_assigns_without_crashing(text):
    try:
        scenario = parse_scenario(text)
    except ScenarioError as exc:
        assert str(exc).startswith("invalid scenario: ")
        return
    if sum(scenario.request.partitions.values()) > 1000 or not scenario.request.members:
        return
    with contextlib.suppress(ZkConsumerError):  # an unknown strategy, a member asking for an unknown topic
        registry.create(scenario.strategy or "range").assign(scenario.request)

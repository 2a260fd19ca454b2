"""The JSON scenario that ``zkconsumer assign`` and ``zkconsumer compare`` read.

::

    {"strategy": "legacy-range",
     "partitions": {"t0": 3, "t1": 2},
     "members": {
       "group1_c1": {"streams": {"t0": 2, "t1": 1}},
       "c2": {"topics": ["t0", "t1"], "owned": [["t0", 0]], "generation": 3}}}

Optional keys: per member ``group_instance_id`` (static membership, which orders members for range and
round robin), and at the top ``roundrobin_hash`` (``"bracket"``, the default, hashes ``[topic,partition]``
as Kafka 0.8-0.11 did; ``"dash"`` hashes ``topic-partition`` as 1.x did) and ``topic_ids`` (``{topic:
id}``, Kafka topic ids in their 22-character base64 form, which the server-side ``consumer-uniform``
assignor orders topics by; a topic without one gets a stable id generated from its name).

For ``consumer-uniform`` and ``consumer-range`` a member's ``owned`` is its current target assignment as
the group coordinator holds it, in the order its target-assignment record lists it, and members are
listed in the order they entered the coordinator's members map.

Scenarios are typed by hand, so validation is strict and every message names the place: unknown keys
(typos), duplicate keys (JSON allows them, Python would silently keep the last), and owned partitions
that do not exist are errors here, even though the assignors themselves would quietly drop such
partitions the way Kafka does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from zkconsumer.assignors.legacy_roundrobin import HASH_FORMATS
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.assignors.registry import StrategyOptions
from zkconsumer.assignors.topic_ids import TopicIdError, Uuid
from zkconsumer.errors import UsageError
from zkconsumer.types import TopicPartition

_TOP_KEYS = ("strategy", "partitions", "members", "roundrobin_hash", "topic_ids")
_MEMBER_KEYS = ("streams", "topics", "owned", "generation", "group_instance_id")


class ScenarioError(UsageError):
    """The scenario is not valid JSON or not in the scenario format."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"invalid scenario: {problem}")


@dataclass(frozen=True, slots=True)
class Scenario:
    strategy: str | None
    request: AssignmentInput
    options: StrategyOptions


def parse_scenario(text: str) -> Scenario:
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:  # also a number past Python's digit limit, deep nesting
        raise ScenarioError(f"not JSON: {str(exc)[:100]}") from None
    return scenario_from_json(document)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ScenarioError(f"duplicate key {json.dumps(key)} in one object")
        result[key] = value
    return result


def scenario_from_json(document: Any) -> Scenario:
    _expect(isinstance(document, dict), "the scenario must be a JSON object")
    _no_unknown_keys(document, _TOP_KEYS, "the scenario")
    strategy = document.get("strategy")
    _expect(strategy is None or isinstance(strategy, str), '"strategy" must be a string')
    hash_format = document.get("roundrobin_hash", "bracket")
    _expect(
        hash_format in HASH_FORMATS,
        f'"roundrobin_hash" must be one of {", ".join(HASH_FORMATS)}, got {json.dumps(hash_format)}',
    )
    _expect("partitions" in document, 'the scenario has no "partitions" object')
    _expect("members" in document, 'the scenario has no "members" object')
    partitions = _partitions(document["partitions"])
    members = document["members"]
    _expect(isinstance(members, dict), '"members" must be an object of member id to member')
    topic_ids = _topic_ids(document.get("topic_ids", {}), partitions)
    request = AssignmentInput(
        partitions, tuple(_member(mid, spec, partitions) for mid, spec in members.items()), topic_ids
    )
    return Scenario(strategy, request, StrategyOptions(roundrobin_hash=hash_format))


def _partitions(value: Any) -> dict[str, int]:
    _expect(isinstance(value, dict), '"partitions" must be an object of topic to partition count')
    for topic, count in value.items():
        _expect(topic != "", '"partitions" has an empty topic name')
        _expect(
            _is_int(count) and count >= 0,
            f"partitions.{topic}: the partition count must be a non-negative integer, got {json.dumps(count)}",
        )
    return dict(value)


def _topic_ids(value: Any, partitions: dict[str, int]) -> dict[str, Uuid]:
    _expect(isinstance(value, dict), '"topic_ids" must be an object of topic to topic id')
    ids: dict[str, Uuid] = {}
    holder: dict[Uuid, str] = {}
    for topic, text in value.items():
        where = f"topic_ids.{topic}"
        _expect(topic in partitions, f'{where}: topic {json.dumps(topic)} does not exist (not in "partitions")')
        _expect(isinstance(text, str), f"{where} must be a topic id string, got {json.dumps(text)}")
        try:
            uuid = Uuid.parse(text)
        except TopicIdError as exc:
            raise ScenarioError(f"{where}: {exc}") from None
        _expect(not uuid.reserved, f"{where}: {text} is an id Kafka never gives a topic")
        _expect(uuid not in holder, f"{where}: {text} is already the id of {json.dumps(holder.get(uuid))}")
        holder[uuid] = topic
        ids[topic] = uuid
    return ids


def _member(member_id: str, spec: Any, partitions: dict[str, int]) -> Member:
    where = f"members.{member_id}"
    _expect(member_id != "", '"members" has an empty member id')
    _expect(isinstance(spec, dict), f"{where} must be an object")
    _no_unknown_keys(spec, _MEMBER_KEYS, where)

    streams = spec.get("streams")
    if streams is not None:
        _expect(isinstance(streams, dict), f"{where}.streams must be an object of topic to stream count")
        for topic, count in streams.items():
            _expect(topic != "", f"{where}.streams has an empty topic name")
            _expect(
                _is_int(count) and count >= 1,
                f"{where}.streams.{topic}: the stream count must be a positive integer, got {json.dumps(count)}",
            )

    topics = spec.get("topics")
    if topics is not None:
        _expect(isinstance(topics, list), f"{where}.topics must be a list of topic names")
        for topic in topics:
            _expect(isinstance(topic, str) and topic != "", f"{where}.topics: {json.dumps(topic)} is not a topic name")
        _expect(len(set(topics)) == len(topics), f"{where}.topics lists a topic twice")

    owned = tuple(_owned(spec.get("owned", []), f"{where}.owned", partitions))

    generation = spec.get("generation")
    if generation is not None:
        _expect(
            _is_int(generation) and generation >= -1,
            f"{where}.generation must be an integer >= -1 (-1: none), got {json.dumps(generation)}",
        )
        if generation == -1:
            generation = None

    instance = spec.get("group_instance_id")
    _expect(
        instance is None or (isinstance(instance, str) and instance != ""),
        f"{where}.group_instance_id must be a non-empty string",
    )
    return Member(member_id, topics=topics, streams=streams, owned=owned, generation=generation,
                  group_instance_id=instance)


def _owned(value: Any, where: str, partitions: dict[str, int]) -> list[TopicPartition]:
    _expect(isinstance(value, list), f'{where} must be a list of ["topic", partition] pairs')
    owned: dict[TopicPartition, None] = {}
    for entry in value:
        _expect(
            isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and _is_int(entry[1]),
            f'{where}: {json.dumps(entry)} is not a ["topic", partition] pair',
        )
        topic, number = entry
        _expect(topic in partitions, f'{where}: topic {json.dumps(topic)} does not exist (not in "partitions")')
        _expect(
            0 <= number < partitions[topic],
            f"{where}: partition {topic}-{number} does not exist ({topic} has {partitions[topic]} partitions)",
        )
        tp = TopicPartition(topic, number)
        _expect(tp not in owned, f"{where} lists {tp} twice")
        owned[tp] = None
    return list(owned)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _no_unknown_keys(obj: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = [k for k in obj if k not in known]
    if unknown and known is _TOP_KEYS and unknown[0] in _MEMBER_KEYS:  # a member's key written one level too high
        _expect(False, f"{where} has {json.dumps(unknown[0])} at the top level: it is a member's key, it belongs "
                       f'inside a member ("members": {{"c1": {{{json.dumps(unknown[0])}: ...}}}})')
    _expect(not unknown, f"{where} has unknown key {json.dumps(unknown[0]) if unknown else ''} "
                         f"(known: {', '.join(known)})")


def _expect(condition: bool, problem: str) -> None:
    if not condition:
        raise ScenarioError(problem)

"""The configs APIs as the front answers them: DescribeConfigs says who the front is and what its coordinators run,
IncrementalAlterConfigs takes the front's topic holds (:mod:`.topic_holds`); everything else in them is the broker's.

- **DescribeConfigs** (32) is relayed, and each broker resource the broker answered gets the front's entries: the
  group coordinators' settings by Kafka's broker config names (``group.min.session.timeout.ms``,
  ``group.consumer.session.timeout.ms``...: :meth:`.FrontConfig.group_settings`), read-only
  and of source ``DEFAULT_CONFIG`` where the value is Kafka's default, ``STATIC_BROKER_CONFIG`` where the front was
  given another, as a Kafka broker describes them; and :data:`~zkconsumer.kafka.topics.FRONT_CONFIG`, naming the
  front, which no Kafka broker has. So a client asking the broker's configs, as it would ask a Kafka broker's, learns
  the settings of the coordinator it talks to, and whether that is this front
  (:func:`zkconsumer.kafka.coordinator_identity.identify`). The broker's own entries of those names give way to the
  front's, whose coordinators are the ones that run; a front whose group APIs the broker's coordinator answers adds
  its name only, saying so (:data:`RELAYING`). The broker is asked for every key of each resource and the
  answer cut to the keys asked for by name, as Kafka answers them: the embedded broker (Tansu 0.6) closes the
  connection on a DescribeConfigs that names keys.
- **IncrementalAlterConfigs** (44): the entries that set or delete
  :data:`~zkconsumer.kafka.topics.SHOWN_PARTITIONS_CONFIG` on a topic are the front's, applied (unless
  ``validate_only``) and answered by it; an invalid one is answered ``INVALID_CONFIG`` for its resource, nothing of
  that resource applied. Every other entry is relayed as it came, and the answers merged in the request's order.
"""

from __future__ import annotations

import dataclasses
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from kio.index import load_response_schema
from kio.schema.errors import ErrorCode
from kio.static.primitive import i8

from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.entities import build, nested
from zkconsumer.front.proxy.handlers import LocalApi, RequestContext
from zkconsumer.front.proxy.topic_holds import TopicHolds, requested_hold
from zkconsumer.front.proxy.wire import MalformedResponse
from zkconsumer.kafka.api_keys import DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS
from zkconsumer.kafka.topics import FRONT_CONFIG

#: the versions answered: kio's (DescribeConfigs from 1) and the embedded broker's
VERSIONS = {DESCRIBE_CONFIGS: (1, 4), INCREMENTAL_ALTER_CONFIGS: (0, 1)}
#: Kafka's ``ConfigResource.Type``
TOPIC, BROKER = 2, 4
#: Kafka's ``ConfigSource``: a broker's static setting, a default
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
#: how a front whose group APIs the broker's coordinator answers says so, after its name
RELAYING = ", group APIs relayed to the broker's coordinator"
#: Kafka's ``ConfigType``
STRING, INT, LIST = 2, 3, 7


class ConfigApis:
    """The two handlers, over the front's config and its topic holds."""

    def __init__(self, config: FrontConfig, holds: TopicHolds) -> None:
        self.holds = holds
        self.entries = dict(config.group_settings())
        self.entries[FRONT_CONFIG] = _named() + ("" if config.group_coordinator else RELAYING)
        self.defaults = type(config)(config.bootstrap).group_settings()  # a front told nothing

    def table(self) -> list[LocalApi]:
        return [LocalApi(DESCRIBE_CONFIGS, *VERSIONS[DESCRIBE_CONFIGS], self.describe_configs),
                LocalApi(INCREMENTAL_ALTER_CONFIGS, *VERSIONS[INCREMENTAL_ALTER_CONFIGS],
                         self.incremental_alter_configs)]

    async def describe_configs(self, context: RequestContext, request: Any) -> Any:
        assert context.relay is not None
        answer = await context.relay(dataclasses.replace(request, resources=tuple(
            dataclasses.replace(r, configuration_keys=None) for r in request.resources)))
        asked = {(r.resource_type, r.resource_name): r.configuration_keys for r in request.resources}
        entry_type = nested(answer, "DescribeConfigsResourceResult")
        results = []
        for result in answer.results:
            keys = asked.get((result.resource_type, result.resource_name))
            if keys is not None:
                result = dataclasses.replace(result, configs=tuple(c for c in result.configs if c.name in keys))
            if result.resource_type == BROKER and result.error_code == ErrorCode.none:
                ours = {name: value for name, value in self.entries.items() if keys is None or name in keys}
                kept = tuple(c for c in result.configs if c.name not in ours)
                result = dataclasses.replace(result, configs=kept + tuple(
                    build(entry_type, name=name, value=value, read_only=True, is_sensitive=False, synonyms=(),
                          config_source=i8(DEFAULT_CONFIG if self.defaults.get(name) == value
                                           else STATIC_BROKER_CONFIG),
                          config_type=i8(_config_type(name)), documentation=None)
                    for name, value in ours.items()))
            results.append(result)
        return dataclasses.replace(answer, results=tuple(results))

    async def incremental_alter_configs(self, context: RequestContext, request: Any) -> Any:
        answer = load_response_schema(INCREMENTAL_ALTER_CONFIGS, request.__version__)
        result_type = nested(answer, "AlterConfigsResourceResponse")
        ours: dict[int, Any] = {}  # the answers of resources whose every entry was the front's, by position
        relayed = []
        for position, resource in enumerate(request.resources):
            holds: list[int | None] = []
            rest: list[Any] = []
            try:
                for entry in resource.configs:
                    is_hold, shown = (requested_hold(entry.name, entry.config_operation, entry.value)
                                      if resource.resource_type == TOPIC else (False, None))
                    (holds if is_hold else rest).append(shown if is_hold else entry)
            except ValueError as exc:
                ours[position] = build(result_type, error_code=ErrorCode.invalid_config, error_message=str(exc),
                                       resource_type=resource.resource_type, resource_name=resource.resource_name)
                continue
            if not request.validate_only:
                for shown in holds:
                    self.holds.hold(resource.resource_name, shown)
            if rest or not holds:
                relayed.append((position, dataclasses.replace(resource, configs=tuple(rest))))
            else:
                ours[position] = build(result_type, error_code=ErrorCode.none, error_message=None,
                                       resource_type=resource.resource_type, resource_name=resource.resource_name)
        if relayed:
            assert context.relay is not None
            broker = await context.relay(dataclasses.replace(request, resources=tuple(r for _, r in relayed)))
            if len(broker.responses) != len(relayed):  # each answer stands for its resource: none may go astray
                raise MalformedResponse(f"IncrementalAlterConfigs v{request.__version__}: the broker answered "
                                        f"{len(broker.responses)} resources of the {len(relayed)} asked")
            ours.update(zip((p for p, _ in relayed), broker.responses, strict=True))
        return build(answer, responses=tuple(ours[p] for p in sorted(ours)))


def _config_type(name: str) -> int:
    if name in (FRONT_CONFIG, "group.consumer.migration.policy"):
        return STRING
    return LIST if name.endswith(".assignors") else INT


def _named() -> str:
    """The front as it names itself: ``zkconsumer`` and the installed version."""
    try:
        return f"zkconsumer {version('zkconsumer')}"
    except PackageNotFoundError:
        return "zkconsumer"

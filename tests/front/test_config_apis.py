"""The configs APIs' handlers over the real broker: an IncrementalAlterConfigs answer whose resources do not match
what was relayed is refused as an invalid answer, never matched up by position with what it does not answer."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import uuid
from typing import Any

import pytest
from kio.index import load_request_schema
from time_scale import bounded

from zkconsumer.front.proxy.client import exchange
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.config_apis import INCREMENTAL_ALTER_CONFIGS, TOPIC, ConfigApis
from zkconsumer.front.proxy.entities import nested
from zkconsumer.front.proxy.handlers import RequestContext
from zkconsumer.front.proxy.topic_holds import TopicHolds
from zkconsumer.front.proxy.wire import MalformedResponse, RequestHead
from zkconsumer.kafka.topics import create_topic


def test_an_answer_short_of_a_resource_is_an_invalid_answer(broker_bootstrap):
    topics = [f"cfg-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for topic in topics:
        create_topic(broker_bootstrap, topic, 1)
    request_type = load_request_schema(INCREMENTAL_ALTER_CONFIGS, 0)
    resource_type, entry_type = nested(request_type, "AlterConfigsResource"), nested(request_type, "AlterableConfig")
    request = request_type(validate_only=True, resources=tuple(
        resource_type(resource_type=TOPIC, resource_name=topic, configs=(
            entry_type(name="retention.ms", config_operation=0, value="60000"),)) for topic in topics))

    async def scenario() -> None:
        loop = asyncio.get_running_loop()

        async def relay(body: Any) -> Any:  # the real broker's answer, its last resource lost on the way back
            answer = await loop.run_in_executor(None, functools.partial(exchange, broker_bootstrap, body,
                                                                        bounded(10)))
            return dataclasses.replace(answer, responses=answer.responses[:-1])

        apis = ConfigApis(FrontConfig.of(broker_bootstrap), TopicHolds())
        await apis.incremental_alter_configs(RequestContext(
            RequestHead(INCREMENTAL_ALTER_CONFIGS, 0, 1), "test", "127.0.0.1:1", 1, relay), request)

    with pytest.raises(MalformedResponse, match="the broker answered 1 resources of the 2 asked"):
        asyncio.run(asyncio.wait_for(scenario(), bounded(30)))

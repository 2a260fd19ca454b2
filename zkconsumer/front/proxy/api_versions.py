"""What the front advertises in ApiVersions: the broker's ranges, narrowed to what the front can stand behind, with
the front's own APIs in place of the broker's.

* The APIs whose answers the front rewrites (:data:`zkconsumer.front.proxy.rewrite.REWRITTEN`) and ApiVersions itself:
  only the versions kio can parse, since the front must read and write those answers.
* Produce and Fetch: up to the last version before KIP-951's node endpoints (Produce 10, Fetch 16), which name the
  new leader's host and port in a tagged field of answers the front relays unread; the versions below carry the
  same data otherwise, and clients fall back to a Metadata request (rewritten) to find a moved leader.
* APIs naming nodes in answers the front does not rewrite (DescribeQuorum's listeners, the share groups' node
  endpoints): not advertised.
* APIs kio does not know: not advertised either, since the front closes a connection that sends an API key Kafka
  does not define (:func:`zkconsumer.front.proxy.wire.read_request_head`).
* The front's own APIs (:mod:`zkconsumer.front.proxy.handlers`): their own ranges, whether or not the broker has them.
* The old versions the front answers itself (:mod:`~zkconsumer.front.legacy`): an API's range starts at the
  oldest of them where they join it without a gap.

Pure: version ranges in, version ranges out; :func:`advertise` applies them to the broker's ApiVersions answer.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kio.schema.index import api_key_map
from kio.static.primitive import i16

from zkconsumer.front.proxy.rewrite import REWRITTEN
from zkconsumer.front.proxy.wire import known_versions
from zkconsumer.kafka.api_keys import API_VERSIONS, FETCH, PRODUCE

#: the newest versions relayed unread that name no broker (KIP-951 adds node endpoints at the next one)
CAPPED = {PRODUCE: 9, FETCH: 15}
#: DescribeQuorum, ShareFetch, ShareAcknowledge: their answers name nodes the front does not rewrite
WITHHELD = frozenset({55, 78, 79})

Ranges = Mapping[int, tuple[int, int]]


def negotiate(broker: Ranges, local: Ranges, legacy: Mapping[int, range] | None = None) -> dict[int, tuple[int, int]]:
    """The ranges the front advertises, by API key, from the broker's and the front's own (``(min, max)`` each), and
    the old versions the front answers itself (``legacy``)."""
    ranges: dict[int, tuple[int, int]] = {}
    for api_key, (low, high) in broker.items():
        if api_key in local or api_key in WITHHELD or api_key not in api_key_map:
            continue
        if api_key in REWRITTEN or api_key == API_VERSIONS:
            parsed = known_versions(api_key)
            low, high = max(low, parsed.start), min(high, parsed.stop - 1)
        high = min(high, CAPPED.get(api_key, high))
        if low <= high:
            ranges[api_key] = (low, high)
    ranges.update(local)
    for api_key, versions in (legacy or {}).items():
        if api_key in ranges and versions and versions.stop >= ranges[api_key][0]:
            low, high = ranges[api_key]
            ranges[api_key] = (min(low, versions.start), high)
    return dict(sorted(ranges.items()))


def advertise(answer: Any, local: Ranges, legacy: Mapping[int, range] | None = None) -> Any:
    """The broker's ApiVersions ``answer`` (kio's entity, any version) with the ranges :func:`negotiate` gives."""
    api_version = sys.modules[type(answer).__module__].ApiVersion
    broker = {key.api_key: (key.min_version, key.max_version) for key in answer.api_keys}
    keys = tuple(api_version(api_key=i16(api_key), min_version=i16(low), max_version=i16(high))
                 for api_key, (low, high) in negotiate(broker, local, legacy).items())
    return replace(answer, api_keys=keys)

"""Every event zkconsumer emits, by name: ``from zkconsumer.events import catalogue as ev``, then
``ev.REBALANCE_COMPLETED`` (the name upper-cased, ``.`` as ``_``) is the :class:`~zkconsumer.events.spec.Event`
``"rebalance.completed"``, with its level, fields, logger and when; :data:`BY_NAME` finds one from a JSON line's
``event``.

The declarations live one module per area; this module gathers them, so that an emitter, a reader and the events
page name the same objects. It holds the events and nothing else but :data:`BY_NAME`, :data:`COMMON_FIELDS`,
:data:`~zkconsumer.events.connector.STEP_EVENTS` (the rebalance steps' events in their order) and the
:class:`~zkconsumer.events.spec.Event` type: each area module's ``__all__`` names its events, so that its fields,
kinds and sections stay in it. Adding an event: ``docs/development.md`` ("How to add an event").
"""

from __future__ import annotations

from zkconsumer.events.bridge import *  # noqa: F403
from zkconsumer.events.connector import *  # noqa: F403
from zkconsumer.events.connector import STEP_EVENTS
from zkconsumer.events.demo import *  # noqa: F403
from zkconsumer.events.embedded import *  # noqa: F403
from zkconsumer.events.front import *  # noqa: F403
from zkconsumer.events.library import *  # noqa: F403
from zkconsumer.events.migration import *  # noqa: F403
from zkconsumer.events.spark import *  # noqa: F403
from zkconsumer.events.spec import Event

#: every event, by name
BY_NAME: dict[str, Event] = {value: value for value in list(globals().values()) if isinstance(value, Event)}
#: the fields any event may carry besides its own: what the logging configuration and bound contexts add
COMMON_FIELDS: frozenset[str] = frozenset({
    "event", "level", "timestamp", "logger", "exception", "consumer_id", "group", "rebalance_id", "attempt",
})

__all__ = ["BY_NAME", "COMMON_FIELDS", "STEP_EVENTS", "Event", *sorted(name for name, value in globals().items()
                                                                       if isinstance(value, Event))]

"""The events of the library's smaller parts: the configuration and the log-end reader.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.spec import INT, STR, declare, section
from zkconsumer.events.spec import Field as F

_LIBRARY = section("library", columns=("event", "logger", "level", "fields", "when"))

CONFIG_UNKNOWN_KEY = declare(
    "config.unknown_key", "warning", section=_LIBRARY, logger="zkconsumer.config",
    fields=(F("key", STR),),
    when="a configuration key zkconsumer does not know: ignored, as Kafka's `VerifiableProperties` did",
)
LOG_END_UNDER_REPORTED = declare(
    "log_end.under_reported", "debug", section=_LIBRARY, logger="zkconsumer.log_end_offsets",
    fields=(
        F("bootstrap", STR),
        F("partitions_behind", INT, "how many of the partitions asked about were"),
        F("example", STR, "the first of them: `topic-partition: asked -> read`"),
    ),
    when="the first time a broker's ListOffsets answer is seen behind its log (once per broker address and process)",
)

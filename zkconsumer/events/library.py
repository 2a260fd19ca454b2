"""The events of the library's smaller parts: the configuration and the log-end reader."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.spec import INT, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "CONFIG_UNKNOWN_KEY", "LOG_END_UNDER_REPORTED",
]

_CONFIG = section("library", "zkconsumer.config", columns=("event", "logger", "level", "fields", "when"))
_LOG_END = _CONFIG.logged_by("zkconsumer.log_end_offsets")

CONFIG_UNKNOWN_KEY = _CONFIG.event("config.unknown_key", "warning",
    "a configuration key zkconsumer does not know: ignored, as Kafka's `VerifiableProperties` did", F("key", STR))
LOG_END_UNDER_REPORTED = _LOG_END.event("log_end.under_reported", "debug",
    "the first time a broker's ListOffsets answer is seen behind its log (once per broker address and process)",
    shared.BOOTSTRAP, F("partitions_behind", INT, "how many of the partitions asked about were"),
    F("example", STR, "the first of them: `topic-partition: asked -> read`"))

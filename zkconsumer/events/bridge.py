"""The metadata bridge's events (:mod:`zkconsumer.bridge.metadata_bridge`): what it wrote to ZooKeeper's ``/brokers``
and how its passes went.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.spec import INT, LIST, NULL, NUMBER, STR, declare, section
from zkconsumer.events.spec import Field as F

_BRIDGE = section("bridge", context=("zookeeper", "bootstrap"))
_LOGGER = "zkconsumer.bridge.metadata_bridge"
_TOPIC = (F("topic", STR), F("partitions_before", INT), F("partitions_after", INT))
_PARTITION_STATE = (F("topic", STR), F("partition", INT), F("leader", INT), F("leader_epoch", INT))

BRIDGE_STARTED = declare(
    "bridge.started", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("interval_ms", INT), F("session_id", STR)),
    when="the bridge runs: its first pass follows",
)
BRIDGE_PATHS_CREATED = declare(
    "bridge.paths_created", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("paths", LIST, "a broker's persistent paths that were missing (`/consumers`...)"),),
    when="the first pass created the persistent paths a broker creates when it starts",
)
BRIDGE_BROKER_REGISTERED = declare(
    "bridge.broker_registered", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("broker_id", INT), F("registration", STR, "the JSON written")),
    when="a broker's registration was written under `/brokers/ids`",
)
BRIDGE_BROKER_REREGISTERED = declare(
    "bridge.broker_reregistered", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("broker_id", INT), F("registration", STR, "the JSON written")),
    when="our own registration of a broker replaced with new content",
)
BRIDGE_BROKER_UNREGISTERED = declare(
    "bridge.broker_unregistered", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("broker_id", INT),),
    when="a broker the Metadata API no longer names was unregistered",
)
BRIDGE_BROKER_CONFLICT = declare(
    "bridge.broker_conflict", "warning", section=_BRIDGE, logger=_LOGGER,
    fields=(F("broker_id", INT), F("owner_session", STR, "the holder's session id, in hex")),
    when="another session holds that broker id with other content: left alone (once)",
)
BRIDGE_CONTROLLER_ELECTED = declare(
    "bridge.controller_elected", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("broker_id", INT),),
    when="`/controller` written with the Metadata API's controller",
)
BRIDGE_CONTROLLER_RESIGNED = declare(
    "bridge.controller_resigned", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("broker_id", INT, "-1"),),
    when="no controller any more: `/controller` removed",
)
BRIDGE_TOPIC_CREATED = declare(
    "bridge.topic_created", "info", section=_BRIDGE, logger=_LOGGER, fields=_TOPIC,
    when="a topic's znode and partition states were written (`partitions_before` 0)",
)
BRIDGE_PARTITIONS_ADDED = declare(
    "bridge.partitions_added", "info", section=_BRIDGE, logger=_LOGGER, fields=_TOPIC,
    when="a topic grew: its znode rewritten with the new partitions",
)
BRIDGE_TOPIC_UPDATED = declare(
    "bridge.topic_updated", "info", section=_BRIDGE, logger=_LOGGER, fields=_TOPIC,
    when="a topic's replicas changed with the same partition count",
)
BRIDGE_PARTITION_STATE_CREATED = declare(
    "bridge.partition_state_created", "info", section=_BRIDGE, logger=_LOGGER, fields=_PARTITION_STATE,
    when="a partition's state znode was created",
)
BRIDGE_LEADER_CHANGED = declare(
    "bridge.leader_changed", "info", section=_BRIDGE, logger=_LOGGER, fields=_PARTITION_STATE,
    when="a partition's leader (or leader epoch) changed",
)
BRIDGE_TOPIC_DELETED = declare(
    "bridge.topic_deleted", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("topic", STR),),
    when="a topic the broker no longer has was deleted from ZooKeeper",
)
BRIDGE_MALFORMED_ZNODE = declare(
    "bridge.malformed_znode", "warning", section=_BRIDGE, logger=_LOGGER,
    fields=(F("path", STR),),
    when="a znode the bridge would compare against holds something else: left untouched (once)",
)
BRIDGE_BROKER_UNAVAILABLE = declare(
    "bridge.broker_unavailable", "warning", section=_BRIDGE, logger=_LOGGER,
    fields=(F("error", STR),),
    when="the Metadata API did not answer (once per outage)",
)
BRIDGE_BROKER_RECOVERED = declare(
    "bridge.broker_recovered", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("down_ms", NUMBER),),
    when="the Metadata API answers again",
)
BRIDGE_BROKERS_EXPIRED = declare(
    "bridge.brokers_expired", "warning", section=_BRIDGE, logger=_LOGGER,
    fields=(F("down_ms", NUMBER),),
    when="a broker outage longer than `broker_timeout_ms`: the brokers were unregistered, as their sessions would "
         "have expired",
)
BRIDGE_WRITE_CONFLICT = declare(
    "bridge.write_conflict", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("error", STR),),
    when="another writer changed a znode between our read and write; re-planned",
)
BRIDGE_ZOOKEEPER_UNAVAILABLE = declare(
    "bridge.zookeeper_unavailable", "warning", section=_BRIDGE, logger=_LOGGER,
    fields=(F("error", STR),),
    when="ZooKeeper did not answer (once per outage)",
)
BRIDGE_ZOOKEEPER_RECOVERED = declare(
    "bridge.zookeeper_recovered", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("session_id", STR | NULL, "the session, in hex; null when none yet"),),
    when="ZooKeeper answers again; a new session re-creates the ephemeral registrations",
)
BRIDGE_SYNCED = declare(
    "bridge.synced", "debug", section=_BRIDGE, logger=_LOGGER,
    fields=(F("changes", INT), F("duration_ms", NUMBER)),
    when="a pass ended",
)
BRIDGE_PASS_FAILED = declare(
    "bridge.pass_failed", "error", section=_BRIDGE, logger=_LOGGER,
    fields=(F("error", STR),),
    when="a pass failed in a way none is expected to (a defect), with its traceback, once for passes failing in a "
         "row; the next runs",
)
BRIDGE_PASS_RECOVERED = declare(
    "bridge.pass_recovered", "info", section=_BRIDGE, logger=_LOGGER,
    fields=(F("failed_passes", INT),),
    when="a pass succeeded after that many failed in a row",
)
BRIDGE_STOPPED = declare(
    "bridge.stopped", "info", section=_BRIDGE, logger=_LOGGER,
    when="the bridge stopped",
)

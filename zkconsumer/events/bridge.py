"""The metadata bridge's events (:mod:`zkconsumer.bridge.metadata_bridge`): what it wrote to ZooKeeper's ``/brokers``
and how its passes went."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.spec import INT, LIST, NULL, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "BRIDGE_STARTED", "BRIDGE_PATHS_CREATED", "BRIDGE_BROKER_REGISTERED", "BRIDGE_BROKER_REREGISTERED",
    "BRIDGE_BROKER_UNREGISTERED", "BRIDGE_BROKER_CONFLICT", "BRIDGE_CONTROLLER_ELECTED", "BRIDGE_CONTROLLER_RESIGNED",
    "BRIDGE_TOPIC_CREATED", "BRIDGE_PARTITIONS_ADDED", "BRIDGE_TOPIC_UPDATED", "BRIDGE_PARTITION_STATE_CREATED",
    "BRIDGE_LEADER_CHANGED", "BRIDGE_TOPIC_DELETED", "BRIDGE_MALFORMED_ZNODE", "BRIDGE_BROKER_UNAVAILABLE",
    "BRIDGE_BROKER_RECOVERED", "BRIDGE_BROKERS_EXPIRED", "BRIDGE_WRITE_CONFLICT", "BRIDGE_ZOOKEEPER_UNAVAILABLE",
    "BRIDGE_ZOOKEEPER_RECOVERED", "BRIDGE_SYNCED", "BRIDGE_PASS_FAILED", "BRIDGE_PASS_RECOVERED", "BRIDGE_STOPPED",
]

_BRIDGE = section("bridge", "zkconsumer.bridge.metadata_bridge", context=("zookeeper", "bootstrap"))
_TOPIC = (shared.TOPIC, F("partitions_before", INT), F("partitions_after", INT))
_PARTITION_STATE = (shared.TOPIC, shared.PARTITION, F("leader", INT), F("leader_epoch", INT))

BRIDGE_STARTED = _BRIDGE.event("bridge.started", "info",
    "the bridge runs: its first pass follows", F("interval_ms", INT), shared.SESSION_ID)
BRIDGE_PATHS_CREATED = _BRIDGE.event("bridge.paths_created", "info",
    "the first pass created the persistent paths a broker creates when it starts",
    F("paths", LIST, "a broker's persistent paths that were missing (`/consumers`...)"))
BRIDGE_BROKER_REGISTERED = _BRIDGE.event("bridge.broker_registered", "info",
    "a broker's registration was written under `/brokers/ids`", shared.BROKER_ID, shared.REGISTRATION)
BRIDGE_BROKER_REREGISTERED = _BRIDGE.event("bridge.broker_reregistered", "info",
    "our own registration of a broker replaced with new content", shared.BROKER_ID, shared.REGISTRATION)
BRIDGE_BROKER_UNREGISTERED = _BRIDGE.event("bridge.broker_unregistered", "info",
    "a broker the Metadata API no longer names was unregistered", shared.BROKER_ID)
BRIDGE_BROKER_CONFLICT = _BRIDGE.event("bridge.broker_conflict", "warning",
    "another session holds that broker id with other content: left alone (once)", shared.BROKER_ID,
    F("owner_session", STR, "the holder's session id, in hex"))
BRIDGE_CONTROLLER_ELECTED = _BRIDGE.event("bridge.controller_elected", "info",
    "`/controller` written with the Metadata API's controller", shared.BROKER_ID)
BRIDGE_CONTROLLER_RESIGNED = _BRIDGE.event("bridge.controller_resigned", "info",
    "no controller any more: `/controller` removed", F("broker_id", INT, "-1"))
BRIDGE_TOPIC_CREATED = _BRIDGE.event("bridge.topic_created", "info",
    "a topic's znode and partition states were written (`partitions_before` 0)", *_TOPIC)
BRIDGE_PARTITIONS_ADDED = _BRIDGE.event("bridge.partitions_added", "info",
    "a topic grew: its znode rewritten with the new partitions", *_TOPIC)
BRIDGE_TOPIC_UPDATED = _BRIDGE.event("bridge.topic_updated", "info",
    "a topic's replicas changed with the same partition count", *_TOPIC)
BRIDGE_PARTITION_STATE_CREATED = _BRIDGE.event("bridge.partition_state_created", "info",
    "a partition's state znode was created", *_PARTITION_STATE)
BRIDGE_LEADER_CHANGED = _BRIDGE.event("bridge.leader_changed", "info",
    "a partition's leader (or leader epoch) changed", *_PARTITION_STATE)
BRIDGE_TOPIC_DELETED = _BRIDGE.event("bridge.topic_deleted", "info",
    "a topic the broker no longer has was deleted from ZooKeeper", shared.TOPIC)
BRIDGE_MALFORMED_ZNODE = _BRIDGE.event("bridge.malformed_znode", "warning",
    "a znode the bridge would compare against holds something else: left untouched (once)", shared.PATH)
BRIDGE_BROKER_UNAVAILABLE = _BRIDGE.event("bridge.broker_unavailable", "warning",
    "the Metadata API did not answer (once per outage)", shared.ERROR)
BRIDGE_BROKER_RECOVERED = _BRIDGE.event("bridge.broker_recovered", "info",
    "the Metadata API answers again", shared.DOWN_MS)
BRIDGE_BROKERS_EXPIRED = _BRIDGE.event("bridge.brokers_expired", "warning",
    "a broker outage longer than `broker_timeout_ms`: the brokers were unregistered, as their sessions would have "
    "expired", shared.DOWN_MS)
BRIDGE_WRITE_CONFLICT = _BRIDGE.event("bridge.write_conflict", "info",
    "another writer changed a znode between our read and write; re-planned", shared.ERROR)
BRIDGE_ZOOKEEPER_UNAVAILABLE = _BRIDGE.event("bridge.zookeeper_unavailable", "warning",
    "ZooKeeper did not answer (once per outage)", shared.ERROR)
BRIDGE_ZOOKEEPER_RECOVERED = _BRIDGE.event("bridge.zookeeper_recovered", "info",
    "ZooKeeper answers again; a new session re-creates the ephemeral registrations",
    F("session_id", STR | NULL, "the session, in hex; null when none yet"))
BRIDGE_SYNCED = _BRIDGE.event("bridge.synced", "debug", "a pass ended", F("changes", INT), shared.DURATION_MS)
BRIDGE_PASS_FAILED = _BRIDGE.event("bridge.pass_failed", "error",
    "a pass failed in a way none is expected to (a defect), with its traceback, once for passes failing in a row; the "
    "next runs", shared.ERROR)
BRIDGE_PASS_RECOVERED = _BRIDGE.event("bridge.pass_recovered", "info",
    "a pass succeeded after that many failed in a row", F("failed_passes", INT))
BRIDGE_STOPPED = _BRIDGE.event("bridge.stopped", "info", "the bridge stopped")

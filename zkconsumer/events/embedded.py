"""The local servers' events: the ZooKeeper ensemble, the local environment and the Docker containers."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.spec import INT, LIST, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "ENSEMBLE_STARTED", "ENSEMBLE_SERVER_STOPPED", "ENSEMBLE_SERVER_STARTED", "ENSEMBLE_STOPPED", "LOCAL_STARTED",
    "LOCAL_ALREADY_RUNNING", "LOCAL_RECONCILED", "LOCAL_STALE_STATE", "LOCAL_HEALED", "LOCAL_HEAL_REFUSED",
    "LOCAL_STOPPED", "DOCKER_CONTAINER_STARTED", "DOCKER_CONTAINER_STOPPED",
]

_ENSEMBLE = section("embedded.ensemble", "zkconsumer.ensemble", context=("workdir",))
_LOCAL = section("embedded.local", "zkconsumer.local", context=("run_dir",))
_DOCKER = section("embedded.docker", "zkconsumer.docker", context=("server", "image"))

ENSEMBLE_STARTED = _ENSEMBLE.event("ensemble.started", "info",
    "every server serves in the quorum, one leads, and a write through `connect` succeeded",
    F("connect", STR, "every server"), F("servers", INT, "how many"))
ENSEMBLE_SERVER_STOPPED = _ENSEMBLE.event("ensemble.server_stopped", "info",
    "one server was stopped", F("server", INT, "its id, `myid`"), F("how", STR, "`stop`: SIGTERM, `kill`: SIGKILL"))
ENSEMBLE_SERVER_STARTED = _ENSEMBLE.event("ensemble.server_started", "info",
    "one server was started again, with its data directory as it was", F("server", INT),
    F("mode", STR, "`srvr`'s Mode once it serves: `leader`, `follower`, `not serving` when started without waiting"))
ENSEMBLE_STOPPED = _ENSEMBLE.event("ensemble.stopped", "info",
    "the whole ensemble was stopped", F("servers", INT, "the ids that were running"))
LOCAL_STARTED = _LOCAL.event("local.started", "info",
    "every process started and ready", shared.ZOOKEEPER,
    F("bootstrap_servers", STR, "what clients are given: the front's address, or the broker's with `--direct-broker`"),
    F("broker", STR, "the broker's own address"),
    F("broker_software", STR, "what the broker runs, by `local up --broker`: `Tansu 0.6.0`, `Apache Kafka 4.1.0`..."))
LOCAL_ALREADY_RUNNING = _LOCAL.event("local.already_running", "info",
    "`up` found the environment of this run directory running")
LOCAL_RECONCILED = _LOCAL.event("local.reconciled", "info",
    "after `local.started`, when ZooKeeper and the restarted broker did not agree ([what survives a "
    "restart](embedded.md#what-survives-local-down-and-local-up))",
    F("recreated", LIST, "the topics ZooKeeper records that were created in the broker"),
    F("offsets_past_end", LIST, "`group topic-partition at offset, log end N` for each committed offset past its log's "
        "end"), F("skipped", LIST, "topics not recreated, each with why"))
LOCAL_STALE_STATE = _LOCAL.event("local.stale_state", "info",
    "`up` found a state file it cannot read; it removes it and starts afresh (a readable one whose processes died is "
    "healed: `local.healed`)",
    F("dead", LIST, "what is gone: `unreadable state.json`"))
LOCAL_HEALED = _LOCAL.event("local.healed", "info",
    "`up` found processes of the run directory dead and started each again as it was started, on its recorded "
    "address, the others left running ([healing in place](embedded.md#local-up-heals-in-place))",
    F("restarted", LIST, "the processes started again, in start order"),
    F("kept", LIST, "the processes that were running and were left alone"),
    F("data_lost", LIST, "the restarted processes whose storage did not outlive them (Tansu on memory storage)"))
LOCAL_HEAL_REFUSED = _LOCAL.event("local.heal_refused", "info",
    "`up` found processes of the run directory dead and could not start them where they were (a port taken by "
    "another program...): nothing was started, stopped or removed", F("dead", LIST), shared.ERROR)
LOCAL_STOPPED = _LOCAL.event("local.stopped", "info",
    "`down` stopped the environment", F("processes", LIST, "those stopped, in order"))
DOCKER_CONTAINER_STARTED = _DOCKER.event("docker.container_started", "info",
    "a server's container is up (the container pass of `make test`)", F("address", STR, "where clients reach it"))
DOCKER_CONTAINER_STOPPED = _DOCKER.event("docker.container_stopped", "info", "the container was stopped")

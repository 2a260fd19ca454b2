"""The local servers' events: the ZooKeeper ensemble, the local environment and the Docker containers.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.spec import INT, LIST, STR, declare, section
from zkconsumer.events.spec import Field as F

section("embedded.ensemble", context=("workdir",))
section("embedded.local", context=("run_dir",))
_DOCKER = section("embedded.docker", context=("server", "image"))

ENSEMBLE_STARTED = declare(
    "ensemble.started", "info",
    section="embedded.ensemble",
    logger="zkconsumer.ensemble",
    fields=(
        F("connect", STR, "every server"),
        F("servers", INT, "how many"),
    ),
    when="every server serves in the quorum, one leads, and a write through `connect` succeeded",
)

ENSEMBLE_SERVER_STOPPED = declare(
    "ensemble.server_stopped", "info",
    section="embedded.ensemble",
    logger="zkconsumer.ensemble",
    fields=(
        F("server", INT, "its id, `myid`"),
        F("how", STR, "`stop`: SIGTERM, `kill`: SIGKILL"),
    ),
    when="one server was stopped",
)

ENSEMBLE_SERVER_STARTED = declare(
    "ensemble.server_started", "info",
    section="embedded.ensemble",
    logger="zkconsumer.ensemble",
    fields=(
        F("server", INT),
        F("mode", STR, "`srvr`'s Mode once it serves: `leader`, `follower`, `not serving` when started without "
                       "waiting"),
    ),
    when="one server was started again, with its data directory as it was",
)

ENSEMBLE_STOPPED = declare(
    "ensemble.stopped", "info",
    section="embedded.ensemble",
    logger="zkconsumer.ensemble",
    fields=(
        F("servers", INT, "the ids that were running"),
    ),
    when="the whole ensemble was stopped",
)

LOCAL_STARTED = declare(
    "local.started", "info",
    section="embedded.local",
    logger="zkconsumer.local",
    fields=(
        F("zookeeper", STR),
        F("bootstrap_servers", STR, "what clients are given: the front's address, or the broker's with "
                                    "`--direct-broker`"),
        F("broker", STR, "the broker's own address"),
    ),
    when="every process started and ready",
)

LOCAL_ALREADY_RUNNING = declare(
    "local.already_running", "info",
    section="embedded.local",
    logger="zkconsumer.local",
    fields=(
        # ? same
    ),
    when="`up` found the environment of this run directory running",
)

LOCAL_RECONCILED = declare(
    "local.reconciled", "info",
    section="embedded.local",
    logger="zkconsumer.local",
    fields=(
        F("recreated", LIST, "the topics ZooKeeper records that were created in the broker"),
        F("offsets_past_end", LIST, "`group topic-partition at offset, log end N` for each committed offset past its "
                                    "log's end"),
        F("skipped", LIST, "topics not recreated, each with why"),
    ),
    when="after `local.started`, when ZooKeeper and the restarted broker did not agree ([what survives a "
         "restart](embedded.md#what-survives-local-down-and-local-up))",
)

LOCAL_STALE_STATE = declare(
    "local.stale_state", "info",
    section="embedded.local",
    logger="zkconsumer.local",
    fields=(
        F("dead", LIST, "the processes of an earlier run that are gone"),
    ),
    when="`up` found a run directory whose processes died; it stops the survivors and starts afresh",
)

LOCAL_STOPPED = declare(
    "local.stopped", "info",
    section="embedded.local",
    logger="zkconsumer.local",
    fields=(
        F("processes", LIST, "those stopped, in order"),
    ),
    when="`down` stopped the environment",
)


DOCKER_CONTAINER_STARTED = declare(
    "docker.container_started", "info", section=_DOCKER, logger="zkconsumer.docker",
    fields=(F("address", STR, "where clients reach it"),),
    when="a server's container is up (the container pass of `make test`)",
)
DOCKER_CONTAINER_STOPPED = declare(
    "docker.container_stopped", "info", section=_DOCKER, logger="zkconsumer.docker",
    when="the container was stopped",
)

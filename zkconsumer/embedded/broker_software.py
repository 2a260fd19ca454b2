"""What software a broker runs, by name and version, for the reports that must say whose group coordinator ran.

No Kafka API answers a broker's version: DescribeCluster and DescribeConfigs name no release, and ApiVersions names
the API versions and features a broker supports, not the build. So it is learned from the first of these that
applies:

1. **The embedded environment's record** (its ``state.json``, ``broker_software``), when the broker's address is the
   one recorded there: what ``local up`` started, named from the artifact's own version (``Apache Kafka 4.4.0``,
   :func:`~.broker_kinds.software`). Exact, to the patch release.
2. **The broker's ApiVersions** (v3, KIP-584's features): an Apache Kafka broker that runs KRaft advertises the
   highest ``metadata.version`` it supports, the feature level of its release's latest production metadata version
   (``MetadataVersion.LATEST_PRODUCTION``), and each release adds levels of its own. So the level names the release
   (``Apache Kafka 4.4``), not the patch; a broker started with unstable metadata versions enabled advertises a level
   of the next release, and a level above the table below is named as later than its last release.

A broker that is neither (Tansu, which advertises no ``metadata.version``; a broker that does not answer) is left
unnamed: the report then names it by its address and cluster id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: the first ``metadata.version`` feature level of each Apache Kafka release, from ``MetadataVersion`` of Kafka
#: 4.4.0 (``server-common``): 3.3-IV3 is level 7, ..., 4.4-IV0 level 31 (4.4's last, 4.4-IV2, is 33)
FIRST_LEVELS: tuple[tuple[int, str], ...] = (
    (7, "3.3"), (8, "3.4"), (9, "3.5"), (12, "3.6"), (15, "3.7"), (20, "3.8"), (21, "3.9"), (22, "4.0"), (26, "4.1"),
    (28, "4.2"), (30, "4.3"), (31, "4.4"),
)
#: the highest level of the last release in the table (4.4-IV2)
LAST_KNOWN_LEVEL = 33
METADATA_VERSION = "metadata.version"
FROM_STATE = "the embedded environment's state.json (broker_software, what local up started)"
FROM_API_VERSIONS = "the broker's ApiVersions: the highest metadata.version it supports, level {level}"


@dataclass(frozen=True)
class BrokerSoftware:
    #: ``Apache Kafka 4.4.0`` (recorded), ``Apache Kafka 4.4`` (from the metadata.version)
    name: str
    #: how it was learned, for the report
    source: str


def release_of_level(level: int) -> str | None:
    """The Apache Kafka release whose metadata versions include feature ``level`` (``33``: ``4.4``); ``later than
    4.4`` above the table; None below it (before KRaft's metadata.version levels)."""
    if level > LAST_KNOWN_LEVEL:
        return f"later than {FIRST_LEVELS[-1][1]}"
    found = None
    for first, release in FIRST_LEVELS:
        if level >= first:
            found = release
    return found


def broker_software(address: str, run_dir: Path | None = None, timeout: float = 5.0) -> BrokerSoftware | None:
    """What the broker at ``address`` runs: the environment's record at ``run_dir`` (None: the default run
    directory) where it is that broker, else what its ApiVersions say; None when neither names it."""
    return recorded(address, run_dir) or advertised(address, timeout)


def recorded(address: str, run_dir: Path | None = None) -> BrokerSoftware | None:
    """The embedded environment's record of its broker, where ``address`` is that broker's."""
    from zkconsumer.embedded.environment import LocalEnvironment

    record = LocalEnvironment(run_dir).recorded_broker()
    if record is None or record[1] is None or not _same_address(record[0], address):
        return None
    return BrokerSoftware(record[1], FROM_STATE)


def advertised(address: str, timeout: float = 5.0) -> BrokerSoftware | None:
    """The release an Apache Kafka broker's ApiVersions answer names by its highest supported metadata.version."""
    from kio.schema.api_versions.v3.request import ApiVersionsRequest
    from kio.serial.errors import SerialError

    from zkconsumer.front.proxy.client import exchange
    from zkconsumer.front.proxy.wire import MalformedResponse

    first = address.split(",")[0].strip()
    try:
        answer = exchange(first, ApiVersionsRequest(client_software_name="zkconsumer",
                                                    client_software_version="1"), timeout=timeout)
    except (OSError, MalformedResponse, SerialError):
        return None
    levels = [int(f.max_version) for f in getattr(answer, "supported_features", ()) or ()
              if f.name == METADATA_VERSION]
    release = release_of_level(levels[0]) if levels else None
    if release is None:
        return None
    return BrokerSoftware(f"Apache Kafka {release}", FROM_API_VERSIONS.format(level=levels[0]))


def _same_address(recorded_address: str, address: str) -> bool:
    """Whether two bootstrap lists name the same first server (``localhost`` and ``127.0.0.1`` alike)."""
    def first(text: str) -> str:
        return text.split(",")[0].strip().replace("localhost:", "127.0.0.1:")

    return first(recorded_address) == first(address)

"""``groups list``'s rows: the ZooKeeper groups and, with a broker, the groups its coordinators know, one row each.

An operator planning a migration needs one list of every group, whichever protocol it uses: the legacy groups
registered in ZooKeeper (children of ``/consumers``), and the groups of the Java consumer that exist only at the
broker's coordinator, classic (JoinGroup/SyncGroup) or KIP-848 (``group.protocol=consumer``), which ZooKeeper never
sees. A group in both places (a legacy group whose offsets are also committed to Kafka, a group half-way through its
migration) is one row naming both.

Each row says where its offsets live (:mod:`zkconsumer.tools.offset_locations`), where the group lives
(``zookeeper``, ``broker`` or ``zookeeper+broker``), its type at the broker (``classic``, ``consumer``,
``unknown`` when the broker does not name it) and its state there (Kafka's names); ``-`` where the broker does not
know the group. The text keeps the earlier columns first (the group, then where its offsets live), so that a
script reading those two reads them unchanged.

A broker that does not list its groups is one warning: the ZooKeeper groups are still shown, their offsets'
location ``unknown``. :func:`format_rows` and :func:`json_rows` are pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient

from zkconsumer.errors import ServerUnavailableError
from zkconsumer.group.registry import list_groups
from zkconsumer.kafka.group_listing import BrokerGroup, list_broker_groups
from zkconsumer.tools.offset_locations import offset_locations

ZOOKEEPER, BROKER = "zookeeper", "broker"
#: the offsets' location of a group when the broker could not be asked
UNKNOWN_LOCATION = "unknown"
NOT_AT_BROKER = "-"


@dataclass(frozen=True)
class GroupRow:
    group: str
    in_zookeeper: bool
    #: the group as the broker's coordinator lists it; ``None`` when it does not (or was not asked)
    at_broker: BrokerGroup | None = None
    #: ``zookeeper``, ``kafka``, ``both``, ``none``, ``unknown``; ``None`` when no broker was given
    offsets: str | None = None

    @property
    def lives_in(self) -> tuple[str, ...]:
        return tuple(where for where, there in ((ZOOKEEPER, self.in_zookeeper), (BROKER, self.at_broker is not None))
                     if there)


@dataclass(frozen=True)
class GroupsListing:
    rows: tuple[GroupRow, ...]
    #: what could not be asked, one sentence each (printed as warnings)
    warnings: tuple[str, ...] = ()


def merge_rows(zookeeper_groups: Sequence[str], broker_groups: Sequence[BrokerGroup],
               offsets: Mapping[str, str] | None) -> tuple[GroupRow, ...]:
    """One row per group of either side, sorted by group id; ``offsets`` missing a group says ``unknown``."""
    at_broker = {g.group: g for g in broker_groups}
    in_zookeeper = set(zookeeper_groups)
    return tuple(
        GroupRow(group, group in in_zookeeper, at_broker.get(group),
                 None if offsets is None else offsets.get(group, UNKNOWN_LOCATION))
        for group in sorted(in_zookeeper | set(at_broker))
    )


def list_all_groups(zk: KazooClient, bootstrap: str | None, timeout: float = 10.0) -> GroupsListing:
    """The ZooKeeper groups and, with ``bootstrap``, the broker's groups and where every group's offsets live."""
    zookeeper_groups = list_groups(zk)
    if not bootstrap:
        return GroupsListing(merge_rows(zookeeper_groups, (), None))
    try:
        listed = list_broker_groups(bootstrap, timeout)
    except ServerUnavailableError as exc:
        return GroupsListing(merge_rows(zookeeper_groups, (), {}),
                             (f"the broker's groups are not listed, nor where offsets live: {exc}",))
    warnings = (f"the broker's groups may be incomplete: {'; '.join(listed.problems)}",) if listed.problems else ()
    groups = sorted(set(zookeeper_groups) | {g.group for g in listed.groups})
    return GroupsListing(merge_rows(zookeeper_groups, listed.groups,
                                    offset_locations(zk, bootstrap, groups, timeout)), warnings)


def format_rows(rows: Sequence[GroupRow]) -> list[str]:
    """The group alone per line without a broker; with one: group, offsets, where it lives, type, state."""
    if all(row.offsets is None for row in rows):
        return [row.group for row in rows]
    width = max((len(row.group) for row in rows), default=0)
    lines = []
    for row in rows:
        broker = row.at_broker
        lines.append(f"{row.group:<{width}}  {row.offsets or UNKNOWN_LOCATION:<9}  {'+'.join(row.lives_in):<16}  "
                     f"{broker.type if broker else NOT_AT_BROKER:<8}  {broker.state if broker else NOT_AT_BROKER}")
    return lines


def json_rows(rows: Sequence[GroupRow]) -> list[dict[str, Any]]:
    """Each row as data; ``type`` and ``state`` are ``null`` for a group the broker does not know."""
    return [{
        "group": row.group,
        "offsets": row.offsets,
        "lives_in": list(row.lives_in),
        "type": row.at_broker.type if row.at_broker else None,
        "state": row.at_broker.state if row.at_broker else None,
    } for row in rows]

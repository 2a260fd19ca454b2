"""The groups a Kafka cluster's coordinators know, of both protocols: ListGroups through confluent-kafka's admin client.

``groups list --bootstrap-server`` shows them beside the ZooKeeper groups, so that a group that exists only at the
broker (a Java consumer group, classic or KIP-848) is seen as well as the legacy ones. librdkafka asks every broker
of the cluster (ListGroups v5 where the broker has it, which names each group's type; older versions have no type,
which is then ``unknown``) and lists the consumer groups: those whose protocol type is ``consumer`` and those with
none (a group that only has committed offsets, Kafka's "simple" consumer group).

:func:`list_broker_groups` waits at most ``timeout``; a cluster that cannot be asked (no broker answered, or every
answer was an error) raises :class:`~zkconsumer.errors.ServerUnavailableError`; brokers that answered an error while
others answered are returned as ``problems`` beside the groups that were listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import ConsumerGroupState, ConsumerGroupType, KafkaException

from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka.metadata import admin_client

#: Kafka's names of a group's states (``GroupState`` of the classic and of the KIP-848 coordinator), for the ones
#: librdkafka knows; a state it does not know (a KIP-848 group's ``Assigning`` or ``Reconciling``) is ``Unknown``.
STATE_NAMES = {
    ConsumerGroupState.EMPTY: "Empty",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.DEAD: "Dead",
}
#: the group's type as ListGroups v5 names it: the classic protocol (JoinGroup/SyncGroup) or KIP-848's
TYPE_NAMES = {ConsumerGroupType.CLASSIC: "classic", ConsumerGroupType.CONSUMER: "consumer"}
UNKNOWN = "unknown"


@dataclass(frozen=True)
class BrokerGroup:
    """One group as the cluster's coordinator lists it."""

    group: str
    #: ``classic``, ``consumer`` (KIP-848) or ``unknown`` (a broker without ListGroups v5)
    type: str
    #: Kafka's name of the group's state (``Empty``, ``Stable``, ...), ``Unknown`` when librdkafka cannot name it
    state: str
    #: no protocol type: a group that only has committed offsets, no members ever joined through the coordinator
    simple: bool


@dataclass(frozen=True)
class BrokerGroups:
    groups: tuple[BrokerGroup, ...]
    #: brokers that answered an error while others answered, one sentence each
    problems: tuple[str, ...] = ()


def _state(value: object) -> str:
    return STATE_NAMES.get(value, "Unknown")  # type: ignore[call-overload]


def _type(value: object) -> str:
    return TYPE_NAMES.get(value, UNKNOWN)  # type: ignore[call-overload]


def _reason(error: object) -> str:
    """librdkafka's sentence for an error (a ``KafkaError`` or an exception)."""
    text = getattr(error, "str", None)
    return str(text()) if callable(text) else str(error)


def list_broker_groups(bootstrap: str, timeout: float = 10.0) -> BrokerGroups:
    """The consumer groups of every broker of ``bootstrap``'s cluster, sorted by group id."""
    admin = admin_client(bootstrap, {"socket.timeout.ms": max(int(timeout * 1000), 10)})
    try:
        result = admin.list_consumer_groups(request_timeout=timeout).result(timeout + 5)
    except KafkaException as exc:
        reason = _reason(exc.args[0] if exc.args else exc)
        raise ServerUnavailableError(f"broker {bootstrap} did not list its groups ({reason})") from None
    except TimeoutError:
        raise ServerUnavailableError(f"broker {bootstrap} did not list its groups within {timeout:g} s") from None
    problems = tuple(_reason(error) for error in result.errors)
    if problems and not result.valid:
        raise ServerUnavailableError(f"broker {bootstrap} did not list its groups ({'; '.join(problems)})")
    groups = {
        listing.group_id: BrokerGroup(listing.group_id, _type(getattr(listing, "type", None)),
                                      _state(getattr(listing, "state", None)), bool(listing.is_simple_consumer_group))
        for listing in result.valid
    }
    return BrokerGroups(tuple(groups[g] for g in sorted(groups)), problems)

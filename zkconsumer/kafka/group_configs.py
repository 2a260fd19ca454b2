"""A group's own configs at a Kafka broker (Kafka 4.0+, KIP-848: ``consumer.session.timeout.ms``,
``consumer.heartbeat.interval.ms``...), set and removed as ``kafka-configs.sh --entity-type groups`` does: an
IncrementalAlterConfigs of the GROUP resource. A group's config applies to it whether or not it exists yet, within
the broker's ``group.consumer.min/max.*`` bounds (outside them Kafka answers INVALID_CONFIG).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from confluent_kafka import KafkaError, KafkaException

from zkconsumer.errors import ServerUnavailableError, UsageError
from zkconsumer.kafka.metadata import admin_client


def set_group_configs(bootstrap: str, groups: Iterable[str], configs: Mapping[str, str],
                      timeout: float = 10.0) -> None:
    """Set ``configs`` on each of ``groups``.

    :raises UsageError: the broker refused one (its bounds, or it has no group configs), in one line naming it.
    :raises ServerUnavailableError: nothing answered within ``timeout``.
    """
    _alter(bootstrap, groups, configs, timeout)


def delete_group_configs(bootstrap: str, groups: Iterable[str], names: Iterable[str], timeout: float = 10.0) -> None:
    """Remove the configs ``names`` of each of ``groups`` (back to the broker's defaults); what fails is left, as
    a group's config outlives nothing but the group's name."""
    try:
        _alter(bootstrap, groups, dict.fromkeys(names), timeout)
    except (UsageError, ServerUnavailableError):
        return


def _alter(bootstrap: str, groups: Iterable[str], configs: Mapping[str, str | None], timeout: float) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    resources = [ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET if value is not None
                    else AlterConfigOpType.DELETE) for name, value in configs.items()]) for group in groups]
    if not resources:
        return
    admin = admin_client(bootstrap)  # kept: the futures fail when the client is collected
    futures = admin.incremental_alter_configs(resources, request_timeout=timeout)
    for resource, future in futures.items():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if error.code() in (KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN):
                raise ServerUnavailableError(f"no broker answered at {bootstrap}: {error.str()}") from None
            raise UsageError(f"the broker at {bootstrap} refused the configs of group {resource.name} "
                             f"({', '.join(configs)}): {error.str()}") from None
        except TimeoutError:
            raise ServerUnavailableError(f"no broker answered at {bootstrap} within {timeout:g} s") from None

"""ConsumerConfig: every key of the Kafka 0.10.0.1 legacy consumer, with its default, parsed and validated.

Values may be strings, as read from a legacy ``consumer.properties`` file, or native Python values. An invalid
value fails at construction with a message naming the key; an unknown key only warns (as Kafka's
``VerifiableProperties`` did), through the ``config.unknown_key`` event.

zkconsumer's own keys, off by default so that a default zkconsumer behaves as the original (or, for
``zookeeper.multi.max.bytes``, on by default but changing only how znodes are written, never which):

* ``rebalance.backoff.jitter.ms`` (0): a random extra 0..N ms added to each ``rebalance.backoff.ms`` sleep, so
  members that failed together do not all retry together (the rebalance storms kafka-node users hit with many members).
* ``zookeeper.multi.max.bytes`` (524288): the most bytes one ZooKeeper multi-op may carry. Owner claims, releases
  and offset commits of many partitions go in as few multi-ops as fit under it (a ZooKeeper server drops the
  connection on a request above its ``jute.maxbuffer``, 1 MiB by default; the default leaves half of that as
  margin). ``0`` writes one znode per request, as Kafka did. A value too small for one write fails when the connector
  is constructed, naming the key.
* ``metrics.http.port`` (unset: off): serve the consumer's metrics, under the legacy MBeans' names, for Prometheus
  at ``http://<metrics.http.host>:<port>/metrics`` (``0`` picks a free port); ``metrics.http.host`` (``0.0.0.0``)
  is the address to listen on. A port that cannot be listened on fails at construction, naming the key
  (``docs/metrics.md``).
* ``key.decoder`` / ``value.decoder``: callables ``bytes | None -> object`` (default: the bytes unchanged).
* ``zookeeper.auth`` (unset): ``scheme:credentials`` added to the ZooKeeper session (``digest:alice:secret``), or
  ``sasl:user:password`` for a SASL DIGEST-MD5 session against a server set up for it (the identity is then
  ``sasl:user``; see :mod:`zkconsumer.security`). Read
  back as a :class:`~zkconsumer.security.ZkAuth`, which never shows the credentials (nor does ``repr`` of the config
  or any error about the key).
* ``zookeeper.acl`` (unset): the ACL of every znode the consumer creates, in ZooKeeper's ``scheme:id:perms``
  notation, comma separated, or ``open``. Unset, it is ``auth::cdrwa,world:anyone:r`` with ``zookeeper.auth`` set
  (only the creator writes, everyone reads: monitoring tools still see the group), else open, as Kafka wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.log import get_logger
from zkconsumer.security import ZkAuth, needs_auth, parse_acl, parse_auth

#: ``zookeeper.multi.max.bytes``'s default: half of ZooKeeper's default ``jute.maxbuffer`` (0xfffff bytes).
DEFAULT_ZOOKEEPER_MULTI_MAX_BYTES = 512 * 1024

_ID_CHARS = re.compile(r"^[a-zA-Z0-9._-]*$")


class InvalidConfigError(UsageError):
    """Kafka's InvalidConfigException: a value the consumer cannot run with."""


def identity_decoder(data: bytes | None) -> bytes | None:
    return data


@dataclass(frozen=True)
class ConfigKey:
    name: str
    kind: type | str  # int, bool, str, or "callable"
    default: Any = None  # a value, or a callable of the parsed values so far (derived defaults)
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    required: bool = False
    secret: bool = False  # never shown: not in errors, not in repr

    @property
    def attr(self) -> str:
        return self.name.replace(".", "_")


def _derived(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda values: values[key]


KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("group.id", str, required=True),
    ConfigKey("zookeeper.connect", str, required=True),
    ConfigKey("consumer.id", str, None),
    ConfigKey("zookeeper.session.timeout.ms", int, 6000, minimum=1),
    ConfigKey("zookeeper.connection.timeout.ms", int, _derived("zookeeper_session_timeout_ms"), minimum=1),
    ConfigKey("zookeeper.sync.time.ms", int, 2000, minimum=0),
    ConfigKey("socket.timeout.ms", int, 30000, minimum=1),
    ConfigKey("socket.receive.buffer.bytes", int, 65536, minimum=1),
    ConfigKey("fetch.message.max.bytes", int, 1048576, minimum=1),
    ConfigKey("num.consumer.fetchers", int, 1, minimum=1),
    ConfigKey("auto.commit.enable", bool, True),
    ConfigKey("auto.commit.interval.ms", int, 60000, minimum=1),
    ConfigKey("queued.max.message.chunks", int, 2, minimum=1),
    ConfigKey("rebalance.max.retries", int, 4, minimum=1),
    ConfigKey("fetch.min.bytes", int, 1, minimum=0),
    ConfigKey("fetch.wait.max.ms", int, 100, minimum=0),
    ConfigKey("rebalance.backoff.ms", int, _derived("zookeeper_sync_time_ms"), minimum=0),
    ConfigKey("rebalance.backoff.jitter.ms", int, 0, minimum=0),
    ConfigKey("zookeeper.multi.max.bytes", int, DEFAULT_ZOOKEEPER_MULTI_MAX_BYTES, minimum=0),
    ConfigKey("refresh.leader.backoff.ms", int, 200, minimum=0),
    ConfigKey("auto.offset.reset", str, "largest", choices=("smallest", "largest")),
    ConfigKey("consumer.timeout.ms", int, -1),
    ConfigKey("exclude.internal.topics", bool, True),
    ConfigKey("partition.assignment.strategy", str, "range", choices=("range", "roundrobin")),
    ConfigKey("client.id", str, _derived("group_id")),
    ConfigKey("offsets.storage", str, "zookeeper", choices=("zookeeper", "kafka")),
    ConfigKey("dual.commit.enabled", bool, lambda values: values["offsets_storage"] == "kafka"),
    ConfigKey("offsets.channel.backoff.ms", int, 1000, minimum=0),
    ConfigKey("offsets.channel.socket.timeout.ms", int, 10000, minimum=1),
    ConfigKey("offsets.commit.max.retries", int, 5, minimum=0),
    ConfigKey("metrics.http.port", int, None, minimum=0, maximum=65535),
    ConfigKey("metrics.http.host", str, "0.0.0.0"),
    ConfigKey("zookeeper.auth", str, None, secret=True),
    ConfigKey("zookeeper.acl", str, None),
    ConfigKey("key.decoder", "callable", identity_decoder),
    ConfigKey("value.decoder", "callable", identity_decoder),
)
_BY_NAME = {k.name: k for k in KEYS}
#: Keys Kafka defined for MirrorMaker; accepted silently, as Kafka did.
_IGNORED = {"mirror.topics.whitelist", "mirror.topics.blacklist", "mirror.consumer.numthreads"}


def _security(values: dict[str, Any]) -> None:
    """``zookeeper.auth`` becomes a :class:`ZkAuth` (its errors never quote the value); ``zookeeper.acl`` is
    checked whole, so a bad entry fails here rather than at the first znode created."""
    if values["zookeeper_auth"] is not None:
        try:
            values["zookeeper_auth"] = parse_auth(values["zookeeper_auth"])
        except ValueError as exc:
            raise InvalidConfigError(f"config zookeeper.auth: {exc}") from None
    if values["zookeeper_acl"] is not None:
        try:
            acl = parse_acl(values["zookeeper_acl"])
        except ValueError as exc:
            raise InvalidConfigError(f"config zookeeper.acl={values['zookeeper_acl']!r}: {exc}") from None
        if needs_auth(acl) and values["zookeeper_auth"] is None:
            raise InvalidConfigError("config zookeeper.acl: its auth:: entries name the creator's identity, "
                                     "which needs zookeeper.auth")


def _parse(key: ConfigKey, raw: Any) -> Any:
    def bad(why: str) -> InvalidConfigError:
        return InvalidConfigError(f"config {key.name}{'' if key.secret else f'={raw!r}'}: {why}")

    if key.kind == "callable":
        if not callable(raw):
            raise bad("expected a callable taking bytes (or None)")
        return raw
    if key.kind is bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise bad("expected true or false")
    if key.kind is int:
        if isinstance(raw, bool):
            raise bad("expected a whole number")
        try:
            value = int(raw.strip()) if isinstance(raw, str) else int(raw)
        except (TypeError, ValueError):
            raise bad("expected a whole number") from None
        if isinstance(raw, float) and raw != value:
            raise bad("expected a whole number")
        if key.minimum is not None and value < key.minimum:
            raise bad(f"must be at least {key.minimum}")
        if key.maximum is not None and value > key.maximum:
            raise bad(f"must be at most {key.maximum}")
        return value
    if not isinstance(raw, str):
        raise bad("expected a string")
    text = raw.strip()
    if key.name == "offsets.storage":
        text = text.lower()
    if key.choices and text not in key.choices:
        raise bad(f"must be one of {', '.join(key.choices)}")
    return text


def parse_value(name: str, raw: Any) -> Any:
    """One key's value parsed and checked as at construction (the same one-line error naming the key), for a tool
    that takes a key over before building the config."""
    return _parse(_BY_NAME[name], raw)


class ConsumerConfig:
    """The legacy consumer's configuration; read values as attributes, dots become underscores
    (``config.group_id``, ``config.auto_offset_reset``). Immutable once built."""

    group_id: str
    zookeeper_connect: str
    consumer_id: str | None
    zookeeper_session_timeout_ms: int
    zookeeper_connection_timeout_ms: int
    zookeeper_sync_time_ms: int
    socket_timeout_ms: int
    socket_receive_buffer_bytes: int
    fetch_message_max_bytes: int
    num_consumer_fetchers: int
    auto_commit_enable: bool
    auto_commit_interval_ms: int
    queued_max_message_chunks: int
    rebalance_max_retries: int
    fetch_min_bytes: int
    fetch_wait_max_ms: int
    rebalance_backoff_ms: int
    rebalance_backoff_jitter_ms: int
    zookeeper_multi_max_bytes: int
    refresh_leader_backoff_ms: int
    auto_offset_reset: str
    consumer_timeout_ms: int
    exclude_internal_topics: bool
    partition_assignment_strategy: str
    client_id: str
    offsets_storage: str
    dual_commit_enabled: bool
    offsets_channel_backoff_ms: int
    offsets_channel_socket_timeout_ms: int
    offsets_commit_max_retries: int
    metrics_http_port: int | None
    metrics_http_host: str
    zookeeper_auth: ZkAuth | None
    zookeeper_acl: str | None
    key_decoder: Callable[[bytes | None], Any]
    value_decoder: Callable[[bytes | None], Any]

    def __init__(self, properties: Mapping[str, Any]) -> None:
        log = get_logger("zkconsumer.config")
        values: dict[str, Any] = {}
        for name in properties:
            if name not in _BY_NAME and name not in _IGNORED:
                log.emit(ev.CONFIG_UNKNOWN_KEY, key=name)
        for key in KEYS:
            if key.name in properties and properties[key.name] is not None:
                values[key.attr] = _parse(key, properties[key.name])
            elif key.required:
                raise InvalidConfigError(f"config {key.name} is required")
            else:
                values[key.attr] = key.default(values) if callable(key.default) and key.kind != "callable" \
                    else key.default
        for name in ("group.id", "client.id"):
            if not _ID_CHARS.match(values[name.replace(".", "_")]):
                raise InvalidConfigError(
                    f"config {name}={values[name.replace('.', '_')]!r}: only a-z A-Z 0-9 . _ - are allowed"
                )
        if not values["group_id"]:
            raise InvalidConfigError("config group.id must not be empty")
        if values["socket_timeout_ms"] < values["fetch_wait_max_ms"]:
            raise InvalidConfigError(
                f"config socket.timeout.ms={values['socket_timeout_ms']} must be at least "
                f"fetch.wait.max.ms={values['fetch_wait_max_ms']}"
            )
        if not values["zookeeper_connect"]:
            raise InvalidConfigError("config zookeeper.connect must not be empty")
        if not values["metrics_http_host"]:
            raise InvalidConfigError("config metrics.http.host must not be empty (0.0.0.0 listens on every address)")
        _security(values)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, attr: str) -> Any:
        values = object.__getattribute__(self, "_values")
        try:
            return values[attr]
        except KeyError:
            raise AttributeError(attr) from None

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError("ConsumerConfig is immutable; build a new one")

    def get(self, key: str) -> Any:
        """A value by its Kafka key name (``config.get("group.id")``)."""
        if key not in _BY_NAME:
            raise KeyError(f"unknown consumer config key {key!r}")
        return self._values[_BY_NAME[key].attr]

    def __repr__(self) -> str:
        shown = {k.name: self._values[k.attr] for k in KEYS if k.kind != "callable"}
        return f"ConsumerConfig({shown!r})"

    @classmethod
    def from_properties(cls, path: str | Path, overrides: Mapping[str, Any] | None = None) -> ConsumerConfig:
        """Read a Java ``.properties`` file as the legacy tools did (``key=value`` or ``key: value``,
        ``#``/``!`` comments, trailing-backslash continuation)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidConfigError(f"cannot read consumer properties {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise InvalidConfigError(f"cannot read consumer properties {path}: not UTF-8 (byte {exc.start})") from None
        properties: dict[str, Any] = {}
        pending = ""
        for line in text.splitlines():
            stripped = line.strip()
            if not pending and (not stripped or stripped[0] in "#!"):
                continue
            if stripped.endswith("\\") and not stripped.endswith("\\\\"):
                pending += stripped[:-1]
                continue
            stripped, pending = pending + stripped, ""
            match = re.match(r"^((?:[^=:\s\\]|\\.)+)\s*[=:\s]\s*(.*)$", stripped)
            key, value = (match.group(1), match.group(2)) if match else (stripped, "")
            properties[key.replace("\\", "")] = value
        properties.update(overrides or {})
        return cls(properties)

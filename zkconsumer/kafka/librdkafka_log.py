"""The logger handed to librdkafka (its ``logger`` setting) by every confluent-kafka client zkconsumer makes.

librdkafka reports on its own every refused connection and every retry, several lines a second while a broker is
away. The code that made the client knows what the failure means and reports it once, as a structlog event
(``leader_finder.error``, ``fetcher.error``, a CLI command's one-line error), so librdkafka's own lines go to a
standard-library logger with no handler that does not propagate: silent, unless a developer attaches a handler to
``zkconsumer.librdkafka`` to see what the client itself says.
"""

from __future__ import annotations

import logging

LIBRDKAFKA_LOGGER_NAME = "zkconsumer.librdkafka"

#: Pass as ``"logger"`` in the configuration of every ``Consumer``, ``Producer`` and ``AdminClient``.
LIBRDKAFKA_LOGGER = logging.getLogger(LIBRDKAFKA_LOGGER_NAME)
LIBRDKAFKA_LOGGER.addHandler(logging.NullHandler())
LIBRDKAFKA_LOGGER.propagate = False

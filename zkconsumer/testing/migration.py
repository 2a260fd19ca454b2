"""The comparison a test runs in a few lines, the ``zkconsumer_migration`` fixture's object::

    result = zkconsumer_migration.compare(app="orders.app:handle", scenario="migration",
                                          protocols=["legacy-range", "cooperative-sticky"])
    result.assert_nothing_lost()

It calls the runner ``zkconsumer migration compare`` calls (:mod:`zkconsumer.migration.comparison`) on the session's
servers, each protocol in a topic, a group and a ZooKeeper chroot of its run's own (so tests in parallel do not
meet), and returns its :class:`~zkconsumer.migration.outcome.ComparisonResult`. Bad input (an application that
cannot be imported, a scenario that does not parse, a protocol that cannot play it) fails the test in one line before
any process starts.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zkconsumer.embedded.servers import ServerOptions
from zkconsumer.members.application import Application
from zkconsumer.migration.comparison import compare, plan
from zkconsumer.migration.messages import Messages
from zkconsumer.migration.outcome import ComparisonResult
from zkconsumer.scenarios.model import Scenario

#: the pause after each scene settled, before the next one: shorter than the command's 2 s, to keep tests quick
PACE_S = 0.5


@dataclass
class Migration:
    """Runs comparisons on the session's servers, their outputs in ``workdir``; ``coordinator``, where set, is what
    the server the modern groups bootstrap from must say it is; ``notes`` keeps what the runner said (a protocol left
    out, where it ran)."""

    servers: ServerOptions
    workdir: Path
    coordinator: str | None = None
    notes: list[str] = field(default_factory=list)
    _count: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def compare(self, app: str | None = None, scenario: str | Scenario | None = "migration",
                protocols: Sequence[str] | str | None = None, *, on_revoke: str | None = None,
                on_assign: str | None = None, settings: str = "same", partitions: int | None = None,
                rate: float | None = None, pace: float = PACE_S, revoke_ms: int | None = None,
                member: str | Sequence[str] | None = None, messages: Messages | None = None,
                fetch_after_revoke_ms: int = 0) -> ComparisonResult:
        """Play ``scenario`` (a shipped name, a TOML file's path, or a
        :class:`~zkconsumer.scenarios.model.Scenario`) for each of ``protocols`` (default: every protocol that can
        play it), every member running ``app`` (``module:callable``, with its module's ``on_revoke`` and
        ``on_assign`` unless others are named). ``settings``: ``same`` (one set of timeouts for every protocol) or
        ``stock`` (each at its own defaults: :mod:`zkconsumer.migration.timeouts`). ``messages``: the team's own,
        ``(key, value[, headers])`` tuples from an iterable or ``messages(n)``, produced instead of the runner's
        (:mod:`zkconsumer.migration.messages`). ``fetch_after_revoke_ms``: a fault for trying the assertions, every
        modern member going on fetching what it gave up for that long. Bad input, and what the servers
        would refuse (:func:`~zkconsumer.migration.comparison.identified`), fails the test in one line, without a
        traceback. ``member``: your own consumer, a command line (or its words) run as every member of the modern
        protocols, told what to join through its environment and reporting as Kafka's verifiable consumer does (the
        docs' "Writing a member in another language"); the legacy members still run ``app``."""
        import pytest

        from zkconsumer.errors import UsageError

        output = self.workdir / f"comparison-{next(self._count)}"
        application = None if app is None else Application(app, on_revoke, on_assign, path=_import_path())
        try:
            planned = plan(output, scenario=scenario, protocols=protocols, partitions=partitions, rate=rate,
                           pace=pace, revoke_ms=revoke_ms, app=application, settings=settings, member=member,
                           messages=messages, fetch_after_revoke_ms=fetch_after_revoke_ms, say=self.notes.append)
            return compare(planned, self.servers, coordinator=self.coordinator, default_protocols=protocols is None,
                           say=self.notes.append).result
        except UsageError as exc:
            pytest.fail(str(exc), pytrace=False)


def _import_path() -> tuple[str, ...]:
    """The directories this test session imports from that a fresh interpreter would not (the test's root, its
    ``pythonpath``), for the members to import the application as the test does."""
    defaults = {p for p in sys.path if "site-packages" in p or "dist-packages" in p or p.startswith(sys.base_prefix)}
    return tuple(p for p in dict.fromkeys([str(Path.cwd()), *sys.path]) if p and p not in defaults and Path(p).is_dir())

"""The chaos run's report: the run's own facts beside the analysis' findings, written as one flat JSON object,
and the one-line verdict the run prints last."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from zkconsumer.chaos.analysis import Findings


@dataclass
class Report:
    seed: int
    duration_s: float
    members: int
    session_timeout_ms: int
    broker_storage: str = "memory"
    zookeeper_servers: int = 1
    faults: list[dict[str, Any]] = field(default_factory=list)
    # each broker restart: when, how many messages the broker had acknowledged before it, how many of those were
    # delivered by the end of the run, and whether the offsets committed to it before read back the same after
    broker_restarts: list[dict[str, Any]] = field(default_factory=list)
    zookeeper_servers_killed: list[int] = field(default_factory=list)  # by zk-leader and zk-follower, in order
    max_unowned_s: float = 0.0  # longest a partition had no owner znode while a live member owned nothing
    offsets_checked: int = 0
    watch_errors: int = 0
    last_watch_error: str = ""
    violations: list[str] = field(default_factory=list)  # what the run saw itself: offsets, leftovers
    started_at: float = 0.0  # wall clock of time 0 of the faults' times
    load_avg: dict[str, float] = field(default_factory=dict)  # 1-minute load average: start, max, end
    workdir: str = ""  # kept when an invariant broke (deliveries, events, logs), removed otherwise
    wall_s: float = 0.0
    findings: Findings = field(default_factory=Findings)

    @property
    def all_violations(self) -> list[str]:
        return self.violations + self.findings.violations

    @property
    def held(self) -> bool:
        return not self.all_violations

    def as_json(self) -> dict[str, Any]:
        """One flat object: the run's facts, the findings, every violation in one list."""
        out = asdict(self)
        out.update(out.pop("findings"), violations=self.all_violations)
        return out


def verdict(report: Report) -> str:
    found, broken = report.findings, report.all_violations
    head = "HELD" if not broken else f"BROKEN ({len(broken)} violations; first: {broken[0]})"
    return (f"chaos {head}: {found.produced} produced, {found.delivered_distinct} delivered, {found.lost} lost, "
            f"{found.duplicates} duplicates, {len(report.faults)} faults in {report.duration_s:g} s, max overlap "
            f"{found.max_overlap_ms:g} ms (events: {found.max_event_overlap_ms:g} ms), seed {report.seed}, load "
            f"{report.load_avg.get('max', 0):.1f}")

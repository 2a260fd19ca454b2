"""The comparison's outputs: ``report.json`` (the figures, per protocol and per scene, and the sentences that
answer what a migrating team asks: :mod:`zkconsumer.migration.verdict`) and ``report.html`` (those sentences first,
then the figures as charts side by side, and each protocol's rebalance timeline, one above the other on one time
axis, drawn by the trace tools' own overview).

Pure: measures and timelines in, text out; writing the files is :func:`write_report`'s one job.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zkconsumer.migration.measures import Figures, ProtocolMeasures
from zkconsumer.migration.scenes import Protocol
from zkconsumer.migration.verdict import Verdict, verdict
from zkconsumer.pages import Html, render_page
from zkconsumer.pages.charts import bar_chart
from zkconsumer.trace.timeline import Timeline
from zkconsumer.trace.timeline_html import render_legend_svg, render_svg

#: the cluster id Tansu gives itself unless told another (its ``--cluster-id``); the embedded environment keeps it
TANSU_CLUSTER_ID = "tansu_cluster"
REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
NOTE = ("Each protocol runs in a group of its own: a legacy member registers in ZooKeeper and a modern one joins "
        "the group coordinator it finds through the broker, and the two ignore each other. Legacy and modern "
        "members given the same group.id would each be assigned every partition by their own protocol, and every "
        "message would be consumed twice (KIP-125). A migration therefore moves a group over at once (stop the "
        "legacy members, carry the offsets over with `zkconsumer offsets`, start the modern ones), never member by "
        "member.")
MOVE_NOTE = ("Each protocol plays the move in a group of its own, and within it one group id throughout: its legacy "
             "members register in ZooKeeper until the cutover stops every one of them, and only then do its modern "
             "members join the broker's group coordinator, resuming from the offsets the legacy ones left in Kafka. "
             "Legacy and modern members never run in the group at once: each protocol would assign them every "
             "partition, and every message would be consumed twice (KIP-125).")


def groups_note(move: Any) -> str:
    """How the page's groups relate: a move's one group id, moved at once, or a group of its own per protocol."""
    return MOVE_NOTE if move else NOTE


def coordinator_note(session_timeout_ms: int) -> str:
    """Where the modern groups' rebalance time goes on Tansu, in this run's numbers.

    Read in Tansu 0.6.0's group coordinator (``tansu-broker/src/coordinator/group/administrator.rs``) and seen in
    librdkafka's ``cgrp,protocol`` debug log of a member: a JoinGroup is answered once half the session timeout
    has passed since it arrived (checked once a second), whoever has or has not rejoined; a follower's SyncGroup
    is answered once the leader's assignment for its generation is there (checked once a second), else with
    REBALANCE_IN_PROGRESS after 0.8 times the session timeout. Cooperative-sticky's follow-up round meets the
    second rule: the leader rejoins at once after revoking, so the newcomer's first SyncGroup belongs to a
    generation that is already over."""
    join_s = math.ceil(session_timeout_ms / 2 / 1000)
    sync_s = math.ceil(session_timeout_ms * 0.8 / 1000)
    return (f"The modern groups' figures carry a cost of the broker, not of the protocols. On Tansu (the embedded "
            f"environment's broker), the group coordinator answers every JoinGroup only once half the session "
            f"timeout has passed ({join_s} s here, whoever has rejoined), and a newcomer's SyncGroup only once the "
            f"leader's assignment for its generation is there, else with REBALANCE_IN_PROGRESS after 0.8 times "
            f"the session timeout ({sync_s} s here). So an eager join stops every partition for at least {join_s} s; "
            f"and cooperative-sticky's follow-up round (the leader rejoins at once after revoking what moves, "
            f"while the newcomer still waits on its first SyncGroup, for a generation already over) keeps the "
            f"moving partitions unfetched for up to about {sync_s} + {join_s} s. Apache Kafka's coordinator completes "
            f"a join round as soon as every known member has rejoined and answers every SyncGroup when the "
            f"leader's arrives, so there the same rounds take about a heartbeat interval (not measured here). "
            f"The legacy groups rebalance through ZooKeeper and do not pay it.")


@dataclass(frozen=True, slots=True)
class MemberSettings:
    """What one family's members are configured with, to be shown beside the figures: a comparison is only as
    fair as the settings on both sides."""

    family: str
    member: str  # the member's program
    settings: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class ProtocolResult:
    """One protocol's run for the report: what it is, its measures, its timeline, where its events are, and
    what went wrong (``error``: the run stopped early)."""

    protocol: Protocol
    topic: str
    group: str
    measures: ProtocolMeasures
    timeline: Timeline
    events: str  # relative to the output directory
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SummaryRow:
    protocol: str
    kind: str  # who runs the group: legacy ZooKeeper, classic, KIP-848 consumer
    rebalancing: str
    produced: int
    delivered: int
    lost: int
    duplicates: int
    rebalances: int
    failed_attempts: int
    paused: str
    max_pause_ms: str
    paused_partitions: int
    moved: int
    settle_s: str
    downtime_s: str = "0.0"


@dataclass(frozen=True, slots=True)
class MoveRow:
    """A move from ZooKeeper to one protocol, in the figures a migrating team asks for: how long the group fetched
    nothing (in all, and in the cutover's scene), what was delivered twice and what was skipped (never delivered)."""

    protocol: str
    downtime_s: float
    cutover_downtime_s: float
    duplicates: int
    skipped: int


def move_rows(results: Sequence[ProtocolResult], cutover_scene: int) -> list[MoveRow]:
    rows = []
    for r in results:
        t = r.measures.total
        cutover = next((s.figures.downtime_ms for s in r.measures.scenes if s.scene == cutover_scene), 0.0)
        rows.append(MoveRow(r.protocol.name, round(t.downtime_ms / 1000, 2), round(cutover / 1000, 2), t.duplicates,
                            t.lost))
    return rows


def _figures_json(figures: Figures) -> dict[str, Any]:
    return asdict(figures)


def report_json(results: Sequence[ProtocolResult], settings: dict[str, Any],
                members: Sequence[MemberSettings] = ()) -> dict[str, Any]:
    protocols = {}
    for r in results:
        m = r.measures
        protocols[r.protocol.name] = {
            "family": r.protocol.family, "group_protocol": r.protocol.group_protocol, "kind": r.protocol.kind,
            "title": r.protocol.title, "strategy": r.protocol.strategy, "rebalancing": r.protocol.rebalancing,
            "topic": r.topic, "group": r.group, "events": r.events, "error": r.error,
            **_figures_json(m.total),
            "member_failures": [asdict(f) for f in m.failures],
            "pauses": [asdict(p) for p in m.pauses],
            "scenes": [{"scene": s.scene, "title": s.title, "label": f"{s.scene}. {s.title}",
                        "start_s": round(s.start, 3), **_figures_json(s.figures),
                        "group_protocols": {short_names(r)(member): protocol
                                            for member, protocol in s.group_protocols}} for s in m.scenes],
        }
    classic = [r.protocol.name for r in results if r.protocol.group_protocol == "classic"]
    timeouts = settings.get("timeouts") or {}
    session_timeout_ms = (timeouts.get(classic[0]) or {}).get("session_timeout_ms") if classic else None
    coordinator = settings.get("coordinator", "broker")
    identity = settings.get("coordinator_identity") or {}
    # the note is about Tansu's own coordinator, read in its code: where another ran the groups, it does not apply
    tansu = coordinator == "broker" and identity.get("cluster_id") == TANSU_CLUSTER_ID
    broker = coordinator_note(session_timeout_ms) if tansu and isinstance(session_timeout_ms, int) else None
    said = verdict(protocols, timeouts, settings.get("session_scenes") or ())
    move = settings.get("move")
    if move:  # the move's figures by protocol, beside what the run played
        move = {**move, "protocols": {row.protocol: asdict(row) for row in move_rows(results, move["cutover_scene"])}}
    return {"note": groups_note(move), "broker_note": broker, **settings, "move": move, "coordinator": coordinator,
            "verdict": {"overall": list(said.overall), "scenes": [{"label": label, "sentence": sentence}
                                                                  for label, sentence in said.scenes]},
            "member_settings": {m.family: {"member": m.member, **dict(m.settings)} for m in members},
            "problems": problems(results), "protocols": protocols}


def read_verdict(report: dict[str, Any]) -> Verdict:
    """The sentences as ``report.json`` keeps them."""
    said = report.get("verdict") or {}
    return Verdict(tuple(said.get("overall") or ()),
                   tuple((s["label"], s["sentence"]) for s in said.get("scenes") or ()))


def failures(results: Sequence[ProtocolResult]) -> list[str]:
    lines = []
    for r in results:
        if r.error:
            lines.append(f"{r.protocol.name}: the run stopped early: {r.error}")
        for f in r.measures.failures:
            lines.append(f"{r.protocol.name}: member {f.member} exited on its own at +{f.time:.1f}s "
                         f"(status {f.returncode}{': ' + f.reason if f.reason else ''})")
    return lines


def problems(results: Sequence[ProtocolResult]) -> list[str]:
    """Why the run's figures cannot be trusted as the script's (empty: they can): a run that stopped early, a
    member that died on its own (its partitions waited for a session to expire that the script never asked
    for), a message lost (by a run that played to the end: one that stopped early is one problem, not two)."""
    lines = failures(results)
    for r in results:
        if r.measures.total.lost and not r.error:
            lines.append(f"{r.protocol.name}: {r.measures.total.lost} messages produced were never delivered")
    return lines


def short_names(result: ProtocolResult) -> Callable[[str], str]:
    """``<group>_m2`` -> ``m2`` and the run's topic -> nothing, for the drawing; the full names stay in tooltips."""
    prefix = result.group + "_"

    def short(name: str) -> str:
        if name == result.topic:
            return ""
        return name[len(prefix):] if name.startswith(prefix) else name
    return short


def group_protocol_rows(results: Sequence[ProtocolResult]) -> list[tuple[str, list[str]]]:
    """Each protocol whose members changed group protocol during the run (an ``upgrade``), with, per scene of the
    run, its members' group protocols at the scene's end as they subscribed (``consumer: m1; classic: m2, m3``);
    empty when no member changed protocol, as the page then needs no such table."""
    rows = []
    for r in results:
        spoken = {protocol for s in r.measures.scenes for _, protocol in s.group_protocols}
        if len(spoken) < 2:
            continue
        short = short_names(r)
        cells = []
        for s in r.measures.scenes:
            by_protocol: dict[str, list[str]] = {}
            for member, protocol in s.group_protocols:
                by_protocol.setdefault(protocol, []).append(short(member))
            cells.append("; ".join(f"{protocol}: {', '.join(names)}" for protocol, names in sorted(
                by_protocol.items(), key=lambda item: item[0] != "consumer")))
        rows.append((r.protocol.name, cells))
    return rows


def render_report(results: Sequence[ProtocolResult], meta: str, members: Sequence[MemberSettings] = (),
                  broker_note: str | None = None, said: Verdict | None = None, coordinator: str | None = None,
                  move: dict[str, Any] | None = None) -> str:
    """The page; ``coordinator``: the modern groups' coordinator with its version, in words (shown where a modern
    protocol played); ``move``: a move from ZooKeeper's ``report.json`` entry (its figures lead the page)."""
    names = [r.protocol.name for r in results]
    totals = [r.measures.total for r in results]
    rows = [SummaryRow(r.protocol.name, r.protocol.kind, r.protocol.rebalancing, t.produced, t.delivered, t.lost,
                       t.duplicates, t.rebalances, t.failed_attempts, f"{t.partition_seconds_paused:.2f}",
                       f"{t.max_pause_ms:.0f}", t.paused_partitions, t.moved_partitions, f"{t.settle_ms / 1000:.1f}",
                       f"{t.downtime_ms / 1000:.2f}")
            for r, t in zip(results, totals, strict=True)]
    # the scenes played (the run's scenario), as the runs' own markers name them
    played = sorted({(s.scene, s.title) for r in results for s in r.measures.scenes})
    scene_labels = [f"{number}. {title}" for number, title in played]

    def per_scene(attribute: str, scale: float = 1.0) -> dict[str, list[float]]:
        series = {}
        for r in results:
            by_number = {s.scene: getattr(s.figures, attribute) * scale for s in r.measures.scenes}
            series[r.protocol.name] = [by_number.get(number, 0.0) for number, _ in played]
        return series

    small = (6.6, 3.0)
    charts = [
        bar_chart(names, {"partition-seconds": [t.partition_seconds_paused for t in totals]},
                  title="Partition-seconds paused (nobody fetching)", ylabel="s", size=small),
        bar_chart(names, {"ms": [t.max_pause_ms for t in totals]}, title="Longest pause of a partition",
                  ylabel="ms", size=small),
        bar_chart(names, {"paused": [float(t.paused_partitions) for t in totals],
                          "moved": [float(t.moved_partitions) for t in totals]},
                  title="Partitions paused at least once, and changes of owner", size=small),
        bar_chart(names, {"rebalances": [float(t.rebalances) for t in totals],
                          "duplicates": [float(t.duplicates) for t in totals]},
                  title="Rebalance rounds, and duplicated messages", size=small),
        bar_chart(scene_labels, per_scene("partition_seconds_paused"),
                  title="Partition-seconds paused, per scene", ylabel="s", size=(11.0, 3.2)),
        bar_chart(scene_labels, per_scene("settle_ms", 0.001),
                  title="Time to settle, per scene", ylabel="s", size=(11.0, 3.2)),
    ]
    # a twentieth more than the longest run: room right of the last markers (the members stopped as the run drains)
    # for their labels, which would otherwise be cut to a word and an ellipsis at the page's edge
    axis_end = max((r.timeline.end for r in results), default=0.0) * 1.05
    timelines = [(r.protocol.name, Html(render_svg(r.timeline, standalone=False, axis_end=axis_end,
                                                   prefix=f"p{i}-", short=short_names(r), marker_label_rows=8,
                                                   legend=False)))
                 for i, r in enumerate(results)]
    # One legend for every protocol's timeline; the coordinator's part only when one of them has a coordinator lane.
    timeline_legend = Html(render_legend_svg(coordinator=any(r.timeline.coordinators for r in results)))
    return render_page("migration.html.j2", title="Migration comparison: legacy and modern groups on one script",
                       meta=meta, note=groups_note(move), rows=rows, failures=failures(results), charts=charts,
                       timelines=timelines, timeline_legend=timeline_legend, members=members,
                       broker_note=broker_note, scene_labels=scene_labels,
                       group_protocols=group_protocol_rows(results),
                       verdict=said or Verdict((), ()), move=move,
                       move_rows=[MoveRow(**row) for row in (move or {}).get("protocols", {}).values()],
                       coordinator=coordinator if any(r.protocol.family == "modern" for r in results) else None)


def write_report(output_dir: Path, results: Sequence[ProtocolResult], settings: dict[str, Any],
                 meta: str, members: Sequence[MemberSettings] = (), coordinator: str | None = None,
                 ) -> tuple[Path, Path]:
    json_path, html_path = output_dir / REPORT_JSON, output_dir / REPORT_HTML
    report = report_json(results, settings, members)
    json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    html_path.write_text(render_report(results, meta, members, report["broker_note"], read_verdict(report),
                                       coordinator, report["move"]), encoding="utf-8")
    return json_path, html_path

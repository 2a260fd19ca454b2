"""What a migrating team asks of the comparison, answered in sentences: which protocol paused fewer partitions,
for how long, against the legacy group, overall and scene by scene; whether every protocol was sent the same
messages, and lost or repeated any.

Pure: the figures of ``report.json`` (:func:`zkconsumer.migration.report.report_json`'s ``protocols``) in,
sentences out, so that a report written by an earlier run reads the same. The reference is the first legacy
protocol that played the whole script (the group being migrated from); without one, the protocol that paused
least. A protocol whose run stopped early is named as such and left out of the comparisons. Where the protocols ran
with different session timeouts (``report.json``'s ``timeouts``), the scenes a session decides (a member SIGKILLed or
paused: ``session_scenes``) are said to have measured that setting rather than the protocols.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Verdict:
    """``overall``: sentences on the whole run; ``scenes``: (scene label, sentence), in the script's order."""

    overall: tuple[str, ...]
    scenes: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Side:
    """One protocol's figures, whole run or one scene, as the sentences read them."""

    name: str
    title: str
    family: str
    paused: float  # partition-seconds
    partitions: int  # partitions paused at least once
    longest_s: float


def _side(name: str, figures: Mapping[str, Any], scope: Mapping[str, Any]) -> _Side:
    return _Side(name, str(figures.get("title") or name), str(figures.get("family") or ""),
                 float(scope.get("partition_seconds_paused") or 0.0), int(scope.get("paused_partitions") or 0),
                 float(scope.get("max_pause_ms") or 0.0) / 1000)


def _number(value: float) -> str:
    return f"{value:,.1f}"


def _reference(sides: Sequence[_Side]) -> _Side:
    legacy = [s for s in sides if s.family == "legacy"]
    return legacy[0] if legacy else min(sides, key=lambda s: s.paused)


def _partitions(n: int) -> str:
    return f"{n} partition{'s' if n != 1 else ''}"


def _against(side: _Side, reference: _Side, first: bool) -> str:
    """``cooperative-sticky paused 4 partitions for 29.0 partition-seconds, 4.9 times the legacy group's 5.9 (...)``
    (the first in a sentence), ``eager range 4 for 38.7 (6.5 times, ...)`` (the next ones); no ratio to nothing."""
    if side.paused == 0:
        return f"{side.title} {'paused ' if first else ''}none"
    longest = f"longest pause {_number(side.longest_s)} s"
    if not first:
        ratio = f"{side.paused / reference.paused:.1f} times, " if reference.paused > 0 else ""
        return f"{side.title} {side.partitions} for {_number(side.paused)} ({ratio}{longest})"
    said = f"{side.title} paused {_partitions(side.partitions)} for {_number(side.paused)} partition-seconds"
    if reference.paused > 0:
        whose = "the legacy group's" if reference.family == "legacy" else f"{reference.title}'s"
        said += f", {side.paused / reference.paused:.1f} times {whose} {_number(reference.paused)}"
    return f"{said} ({longest})"


def _ranking(sides: Sequence[_Side]) -> str:
    ordered = sorted(sides, key=lambda s: s.paused)
    return ("From fewest partition-seconds paused to most: "
            + ", ".join(f"{s.title} {_number(s.paused)}" for s in ordered) + ".")


def _compare(opening: str, sides: Sequence[_Side]) -> str:
    if all(side.paused == 0 for side in sides):
        return f"{opening}{'no' if opening else 'No'} protocol paused a partition."
    reference = _reference(sides)
    # the modern protocols first, in the run's order: the first is compared in words with the legacy group, the
    # others by their ratios; another legacy protocol last
    others = sorted((s for s in sides if s is not reference), key=lambda s: s.family == "legacy")
    base = (f"{reference.title} paused {_partitions(reference.partitions)} for {_number(reference.paused)} "
            f"partition-seconds (longest pause {_number(reference.longest_s)} s)" if reference.paused > 0
            else f"{reference.title} paused none")
    if not others:
        return f"{opening}{base}."
    parts = [_against(side, reference, index == 0) for index, side in enumerate(others)]
    return f"{opening}{base}; " + "; ".join(parts) + "."


def _production(played: Mapping[str, Mapping[str, Any]]) -> str:
    produced = {name: int(f.get("produced") or 0) for name, f in played.items()}
    values = sorted(set(produced.values()))
    if len(values) == 1:
        sent = f"Every protocol was sent the same {values[0]:,} messages over the same time (the scenes began together)"
    else:
        sent = (f"The protocols were sent between {values[0]:,} and {values[-1]:,} messages over the same time (a "
                f"delivery report missing)")
    lost = [f"{f.get('title') or name} lost {int(f['lost']):,}" for name, f in played.items() if f.get("lost")]
    duplicated = [f"{f.get('title') or name} {int(f['duplicates']):,}" for name, f in played.items()
                  if f.get("duplicates")]
    said = [sent + (": " + ", ".join(lost) if lost else ", and every one was delivered") + "."]
    if duplicated:
        said.append("Delivered twice (consumed again after a rebalance, before a commit): " + ", ".join(duplicated)
                    + ".")
    else:
        said.append("None was delivered twice.")
    return " ".join(said)


def _sessions(played: Mapping[str, Mapping[str, Any]], timeouts: Mapping[str, Mapping[str, Any]]) -> str | None:
    """``legacy-range 4 s, KIP-848 consumer (uniform) 45 s`` when the protocols played ran with different sessions
    (those known); None when they ran with one."""
    known = {name: timeouts[name].get("session_timeout_ms") for name in played if name in timeouts}
    sessions = {name: int(ms) for name, ms in known.items() if isinstance(ms, int)}
    if len(set(sessions.values())) < 2:
        return None
    return ", ".join(f"{played[name].get('title') or name} {ms / 1000:g} s" for name, ms in sessions.items())


def verdict(protocols: Mapping[str, Mapping[str, Any]], timeouts: Mapping[str, Mapping[str, Any]] | None = None,
            session_scenes: Sequence[int] = ()) -> Verdict:
    """The sentences for ``report.json``'s ``protocols`` (name -> figures, in the run's order), its ``timeouts``
    (name -> the session and heartbeat it ran with) and ``session_scenes`` (the scenes a session timeout decides)."""
    played = {name: f for name, f in protocols.items() if not f.get("error")}
    stopped = [str(f.get("title") or name) for name, f in protocols.items() if f.get("error")]
    overall: list[str] = []
    if played:
        sides = [_side(name, f, f) for name, f in played.items()]
        overall.append(_compare("Overall, ", sides))
        if len(sides) > 2:
            overall.append(_ranking(sides))
        overall.append(_production(played))
    if stopped:
        overall.append(f"Stopped early, left out of the comparison: {', '.join(stopped)} (see the problems below).")
    labels: dict[int, str] = {}
    for figures in played.values():
        for scene in figures.get("scenes") or ():
            labels.setdefault(int(scene["scene"]), str(scene.get("label") or scene["scene"]))
    sessions = _sessions(played, timeouts or {})
    measured = [number for number in session_scenes if number in labels]
    if sessions is not None:
        where = (f"the scenes where a member is SIGKILLed or paused ({'; '.join(labels[n] for n in measured)}) "
                 f"measured that setting, not the protocols: a dead or frozen member's partitions wait out its "
                 f"session" if measured else "no scene kills or pauses a member, so no scene waited out a session")
        overall.append(f"The protocols ran with different session timeouts ({sessions}): {where}.")
    scenes = []
    for number in sorted(labels):
        sides = [_side(name, f, scene) for name, f in played.items() for scene in f.get("scenes") or ()
                 if scene.get("scene") == number]
        if sides:
            fewest = min(sides, key=lambda s: s.paused)
            ties = [s.title for s in sides if s.paused == fewest.paused]
            close = f" Fewest: {' and '.join(ties)}." if len(sides) > 2 and len(ties) < len(sides) else ""
            setting = (f" This scene measured the session timeouts ({sessions}), not the protocols."
                       if sessions is not None and number in measured else "")
            scenes.append((labels[number], _compare("", sides) + close + setting))
    return Verdict(tuple(overall), tuple(scenes))

"""Step mode (``zkconsumer demo --step``): the demo stops and waits for Enter before each scene's action and before
each step of a legacy rebalance, so that a teacher can ask the class "what happens next?" and then show it.

A :class:`StepMode` is one of the demo's observers (:class:`zkconsumer.demo.rebalance_demo.DemoObserver`'s methods).
Where it stops:

* before a scene's actions (no member has been started, killed or paused yet: the pause is before the cause);
* before each numbered step of a legacy member's rebalance attempt, for real: the member, started with a step gate
  (:mod:`zkconsumer.members.step_control`), says ``member.step_waiting`` and waits before the step; the step mode says
  which member is about to do what (the step's number, title and meaning, :mod:`zkconsumer.events.rebalance_steps`)
  and lets that member go on after Enter. Members waiting at once are taken in the order they said so, one at a
  time. The attempt is still told as one block when it ends;
* before telling an attempt of a legacy member that has no step gate (the legacy members of ``demo --protocol``
  comparisons): the narration block is held back until Enter;
* before each round of a modern group's coordinator (classic ``round_started``) and each KIP-848 reconciliation
  (``epoch_bumped``), as :func:`zkconsumer.demo.modern_narration.is_round_start` says.

Meanwhile the servers and the other members run on as they are, and a held member keeps its ZooKeeper session (its
heartbeats do not wait for the rebalance: :mod:`zkconsumer.consumer.step_gate`). Enter goes on; ``c`` then Enter (or
the end of the input, Ctrl-D) plays the rest without stopping, every held member let go; Ctrl-C ends the demo as
always.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.demo.modern_narration import is_round_start
from zkconsumer.events import catalogue as ev
from zkconsumer.events.rebalance_steps import BY_NAME
from zkconsumer.members.step_control import GO, PLAY_ON, STEP_WAITING, tell
from zkconsumer.trace.values import text

#: the events that end a legacy attempt, where the narration tells it (:class:`zkconsumer.demo.narration.
#: RebalanceNarrator`)
ATTEMPT_ENDS = (ev.REBALANCE_COMPLETED, ev.REBALANCE_ATTEMPT_FAILED, ev.REBALANCE_FAILED)
PROMPT_END = "what happens next? [Enter; c: play on]"


class StepMode:
    """Stops before each scene's action, each legacy step and each rebalance told; ``read_line`` returns a line typed
    (``""`` at the end of the input), ``out`` is where the prompts go (the narration's stream). ``legacy`` says
    whether a member's ``rebalance.*`` events are a legacy attempt's (a modern member's are told per round, from the
    coordinator). ``held_s`` is how long the stops have held the demo so far (not the group's time to settle)."""

    def __init__(self, read_line: Callable[[], str] = lambda: sys.stdin.readline(), out: TextIO = sys.stdout,
                 legacy: Callable[[str], bool] = lambda _consumer_id: True) -> None:
        self.read_line = read_line
        self.out = out
        self.legacy = legacy
        self.stepping = True
        self.stops = 0
        self.held_s = 0.0
        self._controls: dict[str, Path] = {}  # consumer id -> its step gate's FIFO, once it waited before a step

    # --- the demo's observer ------------------------------------------------------------------------------------

    def scene_started(self, scene: Any) -> None:
        actions = "; ".join(action.describe() for action in getattr(scene, "actions", ()))
        self.stop(f"scene {scene.number}: {actions or scene.title}")

    def action_played(self, scene: Any, action: Any) -> None:
        pass

    def settled(self, result: Any) -> None:
        pass

    def event(self, event: dict[str, Any]) -> None:
        name = str(event.get("event", ""))
        who = text(event.get("consumer_id"))
        if name == STEP_WAITING and who is not None:
            self._before_step(who, event)
        elif name in ATTEMPT_ENDS and who is not None and self.legacy(who) and who not in self._controls:
            attempt = event.get("attempt", event.get("attempts", 1))
            self.stop(f"{who}'s rebalance {event.get('rebalance_id', '?')}, attempt {attempt}, step by step")
        elif is_round_start(event):
            what = "round" if name.endswith("round_started") else "reconciliation to group epoch " + str(
                event.get("to", "?"))
            self.stop(f"the coordinator's {what} of group {event.get('group', '?')}")

    def _before_step(self, who: str, event: dict[str, Any]) -> None:
        """A member waits before a step: say what it is about to do, wait for Enter, and let it go on."""
        control = Path(str(event.get("control", "")))
        self._controls[who] = control
        step = BY_NAME.get(str(event.get("name", "")))
        if step is not None:
            self.stop(f"{who} is about to: {step.number} {step.title} \N{EM DASH} {step.meaning} "
                      f"(rebalance {event.get('rebalance_id', '?')}, attempt {event.get('attempt', '?')})")
        tell(control, GO if self.stepping else PLAY_ON)

    # --- stopping -----------------------------------------------------------------------------------------------

    def stop(self, coming: str) -> None:
        """Say what comes next and wait for Enter (unless the class chose to play on)."""
        if not self.stepping:
            return
        self.stops += 1
        # on a terminal, over the line a wait indicator may be drawing (the stop comes while a scene settles)
        clear = "\r\033[K" if self.out.isatty() else ""
        self.out.write(f"{clear}\n  [step] next: {coming}. {PROMPT_END} ")
        self.out.flush()
        started = time.monotonic()
        answer = self.read_line()
        self.held_s += time.monotonic() - started
        if answer == "" or answer.strip().lower() in ("c", "continue"):
            self.stepping = False
            for control in self._controls.values():  # every member held or to be held: no more waiting
                tell(control, PLAY_ON)
            self.out.write("\n  [step] playing on without stopping\n")
            self.out.flush()

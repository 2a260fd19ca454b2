"""Step mode (``zkconsumer demo --step``): the demo stops and waits for Enter before each scene's action and before
telling each rebalance, so that a teacher can ask the class "what happens next?" and then show it.

A :class:`StepMode` is one of the demo's observers (:class:`zkconsumer.demo.rebalance_demo.DemoObserver`'s methods).
It stops the demo's own thread only: the servers and the member processes run on as they are, each member's session
kept alive by its own heartbeats, so that nothing expires while the class talks. Where it stops:

* before a scene's actions (no member has been started, killed or paused yet: the pause is before the cause);
* before each legacy member's rebalance attempt is told (the demo narrates an attempt as one block, numbered steps
  and outcome, when the attempt ends: the step mode holds the block back until Enter);
* before each round of a modern group's coordinator (classic ``round_started``) and each KIP-848 reconciliation
  (``epoch_bumped``), as :func:`zkconsumer.demo.modern_narration.is_round_start` says.

Enter goes on; ``c`` then Enter (or the end of the input, Ctrl-D) plays the rest without stopping; Ctrl-C ends the
demo as always.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from zkconsumer.demo.modern_narration import is_round_start
from zkconsumer.trace.values import text

#: the events that end a legacy attempt, where the narration tells it (:class:`zkconsumer.demo.narration.
#: RebalanceNarrator`)
ATTEMPT_ENDS = ("rebalance.completed", "rebalance.attempt_failed", "rebalance.failed")
PROMPT_END = "what happens next? [Enter; c: play on]"


class StepMode:
    """Stops before each scene's action and each rebalance told; ``read_line`` returns a line typed (``""`` at the end
    of the input), ``out`` is where the prompts go (the narration's stream). ``legacy`` says whether a member's
    ``rebalance.*`` events are a legacy attempt's (a modern member's are told per round, from the coordinator)."""

    def __init__(self, read_line: Callable[[], str] = lambda: sys.stdin.readline(), out: TextIO = sys.stdout,
                 legacy: Callable[[str], bool] = lambda _consumer_id: True) -> None:
        self.read_line = read_line
        self.out = out
        self.legacy = legacy
        self.stepping = True
        self.stops = 0

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
        if name in ATTEMPT_ENDS and who is not None and self.legacy(who):
            attempt = event.get("attempt", event.get("attempts", 1))
            self.stop(f"{who}'s rebalance {event.get('rebalance_id', '?')}, attempt {attempt}, step by step")
        elif is_round_start(event):
            what = "round" if name.endswith("round_started") else "reconciliation to group epoch " + str(
                event.get("to", "?"))
            self.stop(f"the coordinator's {what} of group {event.get('group', '?')}")

    # --- stopping -----------------------------------------------------------------------------------------------

    def stop(self, coming: str) -> None:
        """Say what comes next and wait for Enter (unless the class chose to play on)."""
        if not self.stepping:
            return
        self.stops += 1
        self.out.write(f"\n  [step] next: {coming}. {PROMPT_END} ")
        self.out.flush()
        answer = self.read_line()
        if answer == "" or answer.strip().lower() in ("c", "continue"):
            self.stepping = False
            self.out.write("\n  [step] playing on without stopping\n")
            self.out.flush()

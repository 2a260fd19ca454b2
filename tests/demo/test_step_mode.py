"""Step mode and the live page on a real demo run, the CLI driven through a pseudo-terminal as a teacher would: the
demo stops before a scene's action (nothing started yet) and before each step of a legacy rebalance, before that
step happens (before the claim: no claim event, no owner znode), the member it started keeps its ZooKeeper session
while the class talks, the live page already shows that member's lane (the demo not yet ended), Enter lets exactly
the step waited for run, ``c`` plays the rest, and the page served at the end is the demo's file."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest
from browser import body_attributes, dump_url
from support import TWO_JOIN_SCENARIO, wait_for
from time_scale import bounded, scaled

pytestmark = pytest.mark.browser

#: the steps of a first attempt before its claim, as the step mode names them (no listener: no step 3)
BEFORE_THE_CLAIM = [(1, "read the cluster"), (2, "stop fetchers"), (2, "commit offsets"), (4, "release ownership"),
                    (5, "assign"), (6, "fetch offsets"), (7, "rebuild topicRegistry")]


def steps_of(out, consumer_id: str) -> list[str]:
    """The rebalance steps of ``consumer_id`` the demo recorded so far, in order."""
    steps = []
    for line in (out / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        name = str(event.get("event", ""))
        if event.get("consumer_id") == consumer_id and name.startswith("rebalance.") and "step" in event:
            steps.append(name.removeprefix("rebalance."))
    return steps


class Terminal:
    """The demo's process on a pseudo-terminal: what it printed so far, and keys typed."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                        start_new_session=True)
        os.close(slave)
        self.text = ""

    def read_until(self, pattern: str, timeout: float = 60.0) -> re.Match:
        deadline = time.monotonic() + bounded(timeout)
        while True:
            found = re.search(pattern, self.text)
            if found is not None:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} in the demo's output:\n{self.text[-3000:]}")
            if select.select([self.master], [], [], min(left, 0.2))[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process ended and closed its side
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"the demo ended without {pattern!r}:\n{self.text[-3000:]}")
                self.text += chunk.decode(errors="replace")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.master)


def test_step_mode_and_live_page_through_a_terminal(tmp_path, zk, kafka_zk, topic_name):
    wait_for(lambda: zk.exists("/brokers/ids") and zk.get_children("/brokers/ids"))
    scenario = tmp_path / "two.toml"
    scenario.write_text(TWO_JOIN_SCENARIO)
    group = f"{topic_name}-g"
    ids = f"/consumers/{group}/ids"
    out = tmp_path / "out"
    term = Terminal([sys.executable, "-m", "zkconsumer", "demo", "--step", "--serve", "--scenario", str(scenario),
                     "--zookeeper", kafka_zk, "--topic", topic_name, "--group", group, "--session-timeout-ms", "2000",
                     "--output-dir", str(out)])
    try:
        url = term.read_until(r"live timeline: (http://127\.0\.0\.1:\d+/)").group(1)
        term.read_until(r"\[step\] next: scene 1: start m1\. what happens next\?")
        assert not zk.exists(ids) or zk.get_children(ids) == []  # stopped before the action
        term.type("\n")
        member = f"{group}_m1"
        owners = f"/consumers/{group}/owners/{topic_name}"
        for number, title in BEFORE_THE_CLAIM:  # m1's first attempt, a stop before each step
            term.read_until(rf"\[step\] next: {member} is about to: {number} {re.escape(title)} \N{{EM DASH}} ")
            term.type("\n")
        term.read_until(rf"\[step\] next: {member} is about to: 8 claim ownership \N{{EM DASH}} create the owner "
                        r"znodes.*\(rebalance 1, attempt 1\)\. what happens next\?")
        assert steps_of(out, member) == ["read_cluster", "stop_fetchers", "commit_offsets", "release", "assign",
                                         "fetch_offsets", "build_registry"]  # the claim has not happened
        assert not zk.exists(owners) or zk.get_children(owners) == []
        registration = f"{ids}/{member}"
        owner = zk.exists(registration).ephemeralOwner
        # the class talks for longer than the member's session timeout: its session lives on, the same one
        held_until = time.monotonic() + scaled(2.5)
        while time.monotonic() < held_until:
            stat = zk.exists(registration)
            assert stat is not None and stat.ephemeralOwner == owner
            time.sleep(0.1)
        assert f"{member}: rebalance 1" not in term.text  # the attempt is told when it ends
        assert "claim" not in steps_of(out, member) and (not zk.exists(owners) or zk.get_children(owners) == [])
        dom = dump_url(url)  # the demo is still running, held here
        assert body_attributes(dom).get("data-rendered") == "ok"
        assert f'<g class="lane" data-consumer="{member}">' in dom
        assert term.process.poll() is None
        term.type("\n")  # the claim, and nothing after it
        term.read_until(rf"\[step\] next: {member} is about to: 9 restart fetchers ")
        assert steps_of(out, member)[-1] == "claim"
        assert sorted(zk.get_children(owners)) == ["0", "1"]
        assert zk.exists(registration).ephemeralOwner == owner
        term.type("\n")
        term.read_until(rf"  {member}: rebalance 1 \(initial\), attempt 1")
        term.read_until(r"\[step\] next: scene 2: start m2\.")
        term.type("c\n")
        term.read_until(r"\[step\] playing on without stopping")
        term.read_until(r"timeline \(HTML\): ")
        assert term.process.wait(timeout=bounded(60)) == 0
    finally:
        term.close()
    assert "Scene 2" in term.text and "[step] next: scene 3" not in term.text
    assert (out / "timeline.html").exists()
    assert term.text.count("[step] next:") == 2 + len(BEFORE_THE_CLAIM) + 2  # 2 scenes, 9 steps, none after c


def test_step_mode_without_a_terminal_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "zkconsumer", "demo", "--step", "--zookeeper", "127.0.0.1:1",
                             "--output-dir", str(tmp_path)], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=bounded(60))
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1].endswith("--step waits for Enter on a terminal; stdin is not one")
    assert "Traceback" not in result.stderr



def test_with_protocols_step_mode_stops_before_scenes_rounds_and_reconciliations_and_c_plays_on():
    """``demo --protocol``: the step mode sees the scenes and events through the protocols' narrator, in its lock (a
    stop holds every protocol's player), and stops before each coordinator round and KIP-848 reconciliation; the
    modern members' own rebalance events are no legacy attempt."""
    import io
    import json

    import coordinator_trace as ct

    from zkconsumer.demo.protocols_narration import ProtocolsNarrator
    from zkconsumer.demo.step_mode import StepMode
    from zkconsumer.scenarios.model import Action, Scene

    answers = iter(["\n", "\n", "\n", "c\n"])
    out = io.StringIO()
    step = StepMode(read_line=lambda: next(answers), out=out, legacy=lambda consumer_id: consumer_id.startswith("L"))
    narrator = ProtocolsNarrator(out, legacy={"legacy-range"})
    narrator.observers = (step,)
    narrator.groups = {"g": "cooperative-sticky", "k": "consumer-uniform"}
    narrator.scene("cooperative-sticky", Scene(1, "Two join", "", (Action("start", "m1"),)))
    narrator.scene("consumer-uniform", Scene(1, "Two join", "", (Action("start", "m1"),)))  # one heading, one stop
    for line in ct.consumer_story() + ct.classic_story():
        narrator.coordinator_event(json.loads(line))
    narrator.caught_up(float("inf"))
    stops = re.findall(r"\[step\] next: ([^.]*)\.", out.getvalue())
    assert stops == ["scene 1: start m1", "the coordinator's reconciliation to group epoch 1 of group k",
                     "the coordinator's reconciliation to group epoch 2 of group k",
                     "the coordinator's round of group g"]
    assert "[step] playing on without stopping" in out.getvalue()
    assert "[consumer-uniform] coordinator k: GROUP EPOCH 1 -> 2 (member_joined)" in out.getvalue()


def test_members_waiting_at_once_go_on_one_at_a_time_in_arrival_order_and_c_lets_every_one_go(tmp_path):
    """Two members' step gates (real FIFOs, :mod:`zkconsumer.members.step_control`) wait before their release: the
    step mode takes the first that said so, lets only it go on at Enter (the other stays held), then the second; ``c``
    lets every member go, including one that waits again meanwhile, without another stop."""
    import io
    import threading

    from structlog.testing import capture_logs

    from zkconsumer.consumer.step_gate import StepContext
    from zkconsumer.demo.step_mode import StepMode
    from zkconsumer.events.rebalance_steps import BY_NAME
    from zkconsumer.members.step_control import STEP_WAITING, HeldSteps

    stop = threading.Event()
    gates = {who: HeldSteps(tmp_path / f"{who}.step", stop) for who in ("a", "b")}
    done: dict[str, list[str]] = {"a": [], "b": []}

    def member(who: str, steps: list[str]) -> None:
        for name in steps:
            gates[who](BY_NAME[name], StepContext(who, 1, 1))
            done[who].append(name)

    def waiting(events) -> list[dict]:
        return [e for e in events if e["event"] == STEP_WAITING]

    prompts: list[dict] = []

    def answer() -> str:
        prompts.append({"done": {who: list(steps) for who, steps in done.items()}})
        return "\n" if len(prompts) == 1 else "c\n"

    out = io.StringIO()
    step = StepMode(read_line=answer, out=out)
    try:
        with capture_logs() as events:
            threads = [threading.Thread(target=member, args=("a", ["release", "assign"]), daemon=True)]
            threads[0].start()
            wait_for(lambda: len(waiting(events)) == 1)
            threads.append(threading.Thread(target=member, args=("b", ["release"]), daemon=True))
            threads[1].start()
            wait_for(lambda: len(waiting(events)) == 2)
            first, second = waiting(events)
            assert (first["consumer_id"], second["consumer_id"]) == ("a", "b")
            step.event(first)  # Enter: a releases, b stays held
            wait_for(lambda: done["a"] == ["release"])
            step.event(second)  # c: b, and a wherever it waits, go on
            for thread in threads:
                thread.join(bounded(10))
                assert not thread.is_alive()
            for later in waiting(events)[2:]:  # a's wait before assign, answered without a stop
                step.event(later)
    finally:
        for gate in gates.values():
            gate.close()
    assert prompts[0]["done"] == {"a": [], "b": []}
    assert prompts[1]["done"] == {"a": ["release"], "b": []}
    assert done == {"a": ["release", "assign"], "b": ["release"]}
    stops = re.findall(r"\[step\] next: (\w+) is about to: (\d) ([a-z ]+) \N{EM DASH}", out.getvalue())
    assert stops == [("a", "4", "release ownership"), ("b", "4", "release ownership")]
    assert step.stops == 2 and not (tmp_path / "a.step").exists()  # the FIFO it made, removed on close

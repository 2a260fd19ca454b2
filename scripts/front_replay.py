"""Replay of the front's group APIs (issue 47): the answers of the front's wire adapter recorded during the
coordinator tests at one commit, and replayed into the adapter of another.

The entry point, the same at a73b0dfc (before the reshaping) and at f71413f (after it): ``GroupApis`` (the wire
adapter, ``zkconsumer/front/group_apis.py`` then ``zkconsumer/front/proxy/group_apis.py``) over a
``CoordinatorRuntime`` of a ``ClassicGroupCoordinator`` and a ``ConsumerGroupCoordinator``. Its inputs are recorded, in
the order the front's one event loop took them, for each runtime a test (or a front the test started) built:

- ``init``: the two machines' configs, whether a record store is behind, the adapter's settings;
- ``load``: the groups' records read back at a front's start (msgpack, hex);
- ``call``: a group API request (API key, version, correlation id, client id, client address, connection id, the
  request's bytes as kio writes them, whether a broker is behind), the topics the front holds back at that time;
- ``relay`` / ``relayed``: what the adapter sent the broker and the broker's answer (bytes), or its failure;
- ``write`` / ``written``: the records the runtime handed its store and when the store was done (or failed);
- ``tick``: the runtime's timer firing; ``ids``: the member ids the machines drew (classic and KIP-848), in order;
- ``cancelled``: a request's handler cancelled (its connection closed);

and its outputs: ``answer`` (the response's bytes, or the exception the handler raised) and the records written.
Every event carries the runtime's clock (``t``, ms). While recording, the runtime's clock and the adapter's
``time.monotonic`` stand still between events (they read the time an event brought), so that a replay giving them
the recorded times sees exactly what the recorded run saw.

A replay builds the same runtime with the recorded configs and member ids, no timer of its own, a clock set from the
events, a relay answering from the recorded broker answers and a store completing writes where the recording did,
and plays the events in order, letting the event loop run until nothing is ready after each. Its outputs are then
compared with the recorded ones, answer by answer (their bytes) and write by write.

Usage (from the repository's root)::

    python scripts/front_replay.py record --commit a73b0dfc -o docs/data/front-replay/a73b0dfc.jsonl
    python scripts/front_replay.py compare  # replays the recording into a73b0dfc and f71413f, prints, writes results
    python scripts/front_replay.py replay --recording FILE [--commit C] -o OUT.json  # one replay's outputs

``record`` and the replays of another commit use a temporary ``git worktree`` of that commit (removed after); the
recording shim (this file) is copied into it and hooked at the end of its ``group_apis.py``, never committed there.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import builtins
import contextlib
import dataclasses
import datetime
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data" / "front-replay"
BEFORE, AFTER = "a73b0dfc", "f71413f"
RECORDING = DATA / f"{BEFORE}.jsonl"
RESULTS = DATA / "results.json"
#: where the shim writes its events (one file per process); unset: the shim does nothing
RECORD_ENV = "FRONT_REPLAY_RECORD_DIR"
#: the tests recorded, one pytest run each: those whose group API requests reach the adapter in process (the first
#: two) or in a front process they start (the others)
TESTS = (
    "tests/front/test_group_id_one_coordinator.py",
    "tests/front/test_offset_order.py",
    "tests/front/test_front_groups.py",
    "tests/front/test_front_group_wire.py",
    "tests/front/test_front_offset_apis.py",
    "tests/front/test_front_consumer_heartbeat_v0.py",
    "tests/front/test_front_online_upgrade.py",
    "tests/front/test_front_restart.py",
)
HANDLERS = ("offset_commit", "offset_fetch", "join_group", "heartbeat", "leave_group", "sync_group",
            "describe_groups", "list_groups", "delete_groups", "txn_offset_commit", "offset_delete",
            "consumer_group_heartbeat", "consumer_group_describe")
LIST_GROUPS = 16
API_NAMES = {8: "OffsetCommit", 9: "OffsetFetch", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup",
             14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups", 28: "TxnOffsetCommit", 42: "DeleteGroups",
             47: "OffsetDelete", 68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe"}


# --- kio's entities as bytes ---------------------------------------------------------------------------------------


def encode_entity(entity: Any) -> str:
    """A kio entity's bytes as kio writes them (base64)."""
    from kio.serial import entity_writer

    out = io.BytesIO()
    entity_writer(type(entity))(out, entity)
    return base64.b64encode(out.getvalue()).decode()


def decode_entity(kind: str, api_key: int, version: int, data: str) -> Any:
    """``kind`` ``request`` or ``response``: the kio entity of those bytes."""
    from kio.index import load_request_schema, load_response_schema
    from kio.serial import entity_reader

    schema = (load_request_schema if kind == "request" else load_response_schema)(api_key, version)
    return entity_reader(schema)(base64.b64decode(data), 0)[0]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


# --- recording (runs inside the recorded commit's processes) -------------------------------------------------------


class _Recorder:
    """One runtime's events, appended to its process's file as they happen."""

    _numbers = itertools.count(1)
    current: _Recorder | None = None

    def __init__(self, directory: str, clock: Callable[[], int]) -> None:
        self.session = f"{os.getpid()}-{next(self._numbers)}"
        self.path = Path(directory) / f"{os.getpid()}.jsonl"
        self.clock = clock
        self.now_ms = clock()
        self.calls = itertools.count(1)
        self.writes = itertools.count(1)
        self.holds: Any = None
        test = os.environ.get("PYTEST_CURRENT_TEST", "")
        self.test = test.rsplit(" (", 1)[0]

    def mark(self) -> int:
        """The time an event brings: the runtime's clock stands at it until the next event."""
        self.now_ms = self.clock()
        _Recorder.current = self
        return self.now_ms

    def emit(self, event: str, **fields: Any) -> None:
        line = json.dumps({"session": self.session, "test": self.test, "event": event, **fields})
        with self.path.open("a") as out:
            out.write(line + "\n")


class _FrozenTime:
    """``time`` for the adapter's module: ``monotonic`` is the clock of the latest event (recording and replay)."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def monotonic(self) -> float:
        current = _Recorder.current
        return self._real.monotonic() if current is None else current.now_ms / 1000

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _config(machine: Any) -> dict[str, Any]:
    return {field.name: getattr(machine.config, field.name) for field in dataclasses.fields(machine.config)}


def install_recorder(module: Any) -> None:
    """Hook the recorder into the adapter's module (``group_apis``) and the runtime it uses, if
    :data:`RECORD_ENV` names a directory."""
    directory = os.environ.get(RECORD_ENV)
    if not directory:
        return
    apis_type, runtime_type = module.GroupApis, module.CoordinatorRuntime
    module.time = _FrozenTime(time)
    runtime_init, runtime_tick, runtime_load = runtime_type.__init__, runtime_type._tick, runtime_type.load

    def init(self: Any, classic: Any, consumer: Any, clock: Any = None, store: Any = None) -> None:
        if clock is None:
            runtime_init(self, classic, consumer, store=store)
        else:
            runtime_init(self, classic, consumer, clock=clock, store=store)
        recorder = _Recorder(directory, self.clock)
        self._replay_recorder = recorder
        self.clock = lambda: recorder.now_ms
        machines = (self.classic, self.consumer)
        recorder.emit("init", t=recorder.mark(), classic=_config(machines[0]), consumer=_config(machines[1]),
                      store=store is not None)
        for machine, attribute, kind in ((machines[0], "_new_uuid", "classic"),
                                         (machines[1], "_new_member_id", "consumer")):
            setattr(machine, attribute, _recording_ids(recorder, kind, getattr(machine, attribute)))
        if store is not None:  # the store itself kept (the front loads its groups from a GroupStore only)
            store.write = _recording_write(recorder, store.write)

    def tick(self: Any) -> None:
        recorder = self._replay_recorder
        recorder.emit("tick", t=recorder.mark())
        runtime_tick(self)

    def load(self: Any, groups: Any) -> None:
        from msgspec import msgpack

        recorder = self._replay_recorder
        recorder.emit("load", t=recorder.mark(), groups={g: _b64(msgpack.encode(r)) for g, r in groups.items()})
        runtime_load(self, groups)

    runtime_type.__init__, runtime_type._tick, runtime_type.load = init, tick, load
    apis_init = apis_type.__init__

    def apis_init_recorded(self: Any, runtime: Any, *args: Any, **kwargs: Any) -> None:
        apis_init(self, runtime, *args, **kwargs)
        recorder = runtime._replay_recorder
        recorder.emit("apis", t=recorder.now_ms, topics_max_age_s=self.topics_max_age_s,
                      commit_timeout_s=self.commit_timeout_s)

    apis_type.__init__ = apis_init_recorded
    for name in HANDLERS:
        setattr(apis_type, name, _recording_handler(getattr(apis_type, name)))


def _recording_ids(recorder: _Recorder, kind: str, draw: Callable[[], str]) -> Callable[[], str]:
    def new_id() -> str:
        value = draw()
        recorder.emit("id", kind=kind, value=value)
        return value

    return new_id


def _recording_write(recorder: _Recorder, write: Callable[[Any], Any]) -> Callable[[Any], Any]:
    async def recorded(records: Any) -> None:
        number = next(recorder.writes)
        recorder.emit("write", n=number, records=[[g, _b64(v)] for g, v in records])
        try:
            await write(records)
        except Exception as exc:
            recorder.emit("written", n=number, t=recorder.mark(), error=_error(exc))
            raise
        recorder.emit("written", n=number, t=recorder.mark(), error=None)

    return recorded


def _error(exc: BaseException) -> list[str]:
    return [type(exc).__name__, str(exc)]


def _recording_handler(handle: Callable[..., Any]) -> Callable[..., Any]:
    async def recorded(self: Any, context: Any, request: Any) -> Any:
        recorder: _Recorder = self.runtime._replay_recorder
        call = next(recorder.calls)
        holds = [sorted(self.holds.shown.items()), sorted(self.holds.hidden)]
        if holds != recorder.holds:
            recorder.holds = holds
            recorder.emit("holds", shown=holds[0], hidden=holds[1])
        head = context.head
        recorder.emit("call", call=call, t=recorder.mark(), handler=handle.__name__, api_key=head.api_key,
                      version=head.api_version, correlation_id=head.correlation_id, client_id=context.client_id,
                      client=context.client, connection_id=context.connection_id, relay=context.relay is not None,
                      request=encode_entity(request))
        if context.relay is not None:
            context = dataclasses.replace(context, relay=_recording_relay(recorder, call, context.relay))
        try:
            answer = await handle(self, context, request)
        except asyncio.CancelledError:
            recorder.emit("cancelled", call=call, t=recorder.mark())
            raise
        except Exception as exc:
            recorder.emit("answer", call=call, raised=_error(exc))
            raise
        recorder.emit("answer", call=call, response=encode_entity(answer))
        return answer

    recorded.__name__ = handle.__name__
    return recorded


def _recording_relay(recorder: _Recorder, call: int, relay: Callable[[Any], Any]) -> Callable[[Any], Any]:
    numbers = itertools.count(1)

    async def relayed(body: Any) -> Any:
        k = next(numbers)
        recorder.emit("relay", call=call, k=k, api_key=body.__api_key__, version=body.__version__,
                      request=encode_entity(body))
        try:
            answer = await relay(body)
        except asyncio.CancelledError:
            recorder.emit("relay_cancelled", call=call, k=k, t=recorder.mark())
            raise
        except Exception as exc:
            recorder.emit("relayed", call=call, k=k, t=recorder.mark(), raised=_error(exc))
            raise
        recorder.emit("relayed", call=call, k=k, t=recorder.mark(), response=encode_entity(answer))
        return answer

    return relayed


def sessions_of(lines: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of each runtime, in order (pure: one process's lines, or several processes' concatenated)."""
    sessions: dict[str, dict[str, Any]] = {}
    for line in lines:
        session = sessions.setdefault(line["session"], {"session": line["session"], "test": line["test"],
                                                        "events": []})
        session["events"].append({k: v for k, v in line.items() if k not in ("session", "test")})
    return [s for s in sessions.values() if any(e["event"] == "call" for e in s["events"])]


# --- replay (runs inside the replayed commit's process) ------------------------------------------------------------


def _import_first(*names: str) -> Any:
    import importlib

    for name in names:
        with contextlib.suppress(ModuleNotFoundError):
            return importlib.import_module(name)
    raise ModuleNotFoundError(names[0])


class _Modules:
    """The adapter and its collaborators, wherever the code at hand keeps them (before or after 242c9d1)."""

    def __init__(self) -> None:
        front = "zkconsumer.front"
        self.apis = _import_first(f"{front}.proxy.group_apis", f"{front}.group_apis")
        self.runtime = _import_first(f"{front}.groups.coordinator_runtime", f"{front}.coordinator_runtime")
        self.classic = _import_first(f"{front}.groups.classic_group", f"{front}.classic_group")
        self.consumer = _import_first(f"{front}.groups.consumer_group", f"{front}.consumer_group")
        self.records = _import_first(f"{front}.groups.group_records", f"{front}.group_records")
        self.handlers = _import_first(f"{front}.proxy.handlers", f"{front}.handlers")
        self.wire = _import_first(f"{front}.proxy.wire", f"{front}.wire")


def _config_of(config_type: Any, values: dict[str, Any]) -> Any:
    known = {field.name for field in dataclasses.fields(config_type)}
    return config_type(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in known})


def _raise(error: list[str]) -> BaseException:
    kind = getattr(builtins, error[0], None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        return kind(error[1])
    return RuntimeError(f"{error[0]}: {error[1]}")


class _Replay:
    """One session replayed into the code at hand."""

    def __init__(self, session: dict[str, Any], modules: _Modules) -> None:
        self.session, self.m = session, modules
        self.events: list[dict[str, Any]] = session["events"]
        self.position = 0
        self.now_ms = 0
        self.notes: list[str] = []
        self.outcomes: dict[int, dict[str, Any]] = {}
        self.writes: list[list[Any]] = []
        self.relays: dict[int, list[dict[str, Any]]] = {}  # call -> its recorded relays
        self.relay_answers: dict[tuple[int, int], dict[str, Any]] = {}
        self.relay_done: set[tuple[int, int]] = set()  # (call, k) whose answer event has been played
        self.relay_waiting: dict[tuple[int, int], asyncio.Future[Any]] = {}
        self.relay_used: set[tuple[int, int]] = set()
        self.write_events: dict[int, dict[str, Any]] = {}
        self.write_waiting: dict[int, asyncio.Future[None]] = {}
        self.writes_done: set[int] = set()
        self.final: dict[int, str] = {}
        ids: dict[str, list[str]] = {"classic": [], "consumer": []}
        for event in self.events:
            kind = event["event"]
            if kind == "relay":
                self.relays.setdefault(event["call"], []).append(event)
            elif kind in ("relayed", "relay_cancelled"):
                self.relay_answers[(event["call"], event["k"])] = event
            elif kind == "written":
                self.write_events[event["n"]] = event
            elif kind == "id":
                ids[event["kind"]].append(event["value"])
            elif kind in ("answer", "cancelled"):
                self.final[event["call"]] = kind
        self.ids = {kind: iter(values) for kind, values in ids.items()}
        self.extra_ids = itertools.count(1)
        self.tasks: dict[int, asyncio.Task[Any]] = {}
        self.apis: Any = None

    def _id(self, kind: str) -> Callable[[], str]:
        def draw() -> str:
            value = next(self.ids[kind], None)
            if value is None:
                self.notes.append(f"{kind} member id drawn beyond the recorded ones")
                return f"replay-extra-{next(self.extra_ids)}"
            return value

        return draw

    def _build(self, init: dict[str, Any], apis: dict[str, Any]) -> None:
        m = self.m
        classic = m.classic.ClassicGroupCoordinator(_config_of(m.classic.ClassicGroupConfig, init["classic"]),
                                                    new_uuid=self._id("classic"))
        consumer = m.consumer.ConsumerGroupCoordinator(_config_of(m.consumer.ConsumerGroupConfig, init["consumer"]),
                                                       new_member_id=self._id("consumer"))
        store = _ReplayStore(self) if init["store"] else None
        runtime = m.runtime.CoordinatorRuntime(classic, consumer, clock=lambda: self.now_ms, store=store)
        runtime._arm = lambda not_before_ms=0: None  # no timer of its own: the recorded ticks
        m.apis.time = _ReplayTime(self)  # the adapter's topics' age by the recorded clock, as recorded
        self.runtime = runtime
        self.apis = m.apis.GroupApis(runtime, topics_max_age_s=apis["topics_max_age_s"],
                                     commit_timeout_s=apis["commit_timeout_s"])

    async def _idle(self) -> None:
        """Let the loop run until nothing is ready."""
        loop = asyncio.get_running_loop()
        quiet = 0
        for _ in range(100_000):
            await asyncio.sleep(0)
            quiet = quiet + 1 if not loop._ready else 0  # type: ignore[attr-defined]
            if quiet >= 3:
                return

    def _relay(self, call: int) -> Callable[[Any], Any]:
        async def relay(body: Any) -> Any:
            request = encode_entity(body)
            recorded = self.relays.get(call, [])
            match = next((r for r in recorded if (call, r["k"]) not in self.relay_used and r["request"] == request),
                         None)
            if match is None:
                match = next((r for r in recorded if (call, r["k"]) not in self.relay_used
                              and r["api_key"] == body.__api_key__), None)
                if match is not None:
                    self.notes.append(f"call {call}: {type(body).__name__} relayed with other fields than recorded")
            if match is None:
                return self._unrecorded_relay(call, body)
            key = (call, match["k"])
            self.relay_used.add(key)
            if key not in self.relay_done:
                future = asyncio.get_running_loop().create_future()
                self.relay_waiting[key] = future
                await future
            return self._relay_answer(self.relay_answers[key], match)

        return relay

    def _relay_answer(self, answered: dict[str, Any], sent: dict[str, Any]) -> Any:
        if answered["event"] == "relay_cancelled":
            raise TimeoutError("the recorded relay was cancelled (timed out)")
        if "raised" in answered:
            raise _raise(answered["raised"])
        response_version = sent["version"]
        return decode_entity("response", sent["api_key"], response_version, answered["response"])

    def _unrecorded_relay(self, call: int, body: Any) -> Any:
        """A relay the recording has no answer to: the session's latest answer of the same API and version."""
        from kio.schema.errors import ErrorCode as KioErrorCode

        key, version = body.__api_key__, body.__version__
        candidates = [(r, self.relay_answers.get((r["call"], r["k"]))) for rs in self.relays.values() for r in rs
                      if r["api_key"] == key and r["version"] == version]
        played = [(r, a) for r, a in candidates if a is not None and (r["call"], r["k"]) in self.relay_done
                  and a["event"] == "relayed" and "response" in a]
        chosen = played[-1] if played else next(((r, a) for r, a in candidates if a is not None
                                                 and a["event"] == "relayed" and "response" in a), None)
        if chosen is None and key == LIST_GROUPS:  # the broker keeps no offsets of a group this session named
            self.notes.append(f"{type(body).__name__} relayed, not recorded: answered with no groups")
            from kio.index import load_response_schema

            answer_type = load_response_schema(key, version)
            values: dict[str, Any] = {"error_code": KioErrorCode.none, "groups": ()}
            if any(field.name == "throttle_time" for field in dataclasses.fields(answer_type)):
                values["throttle_time"] = datetime.timedelta(0)
            return answer_type(**values)
        self.notes.append(f"{type(body).__name__} relayed, not recorded: answered as the session's latest")
        if chosen is None:
            raise ConnectionError("no recorded answer")
        return self._relay_answer(chosen[1], chosen[0])

    async def _handle(self, call: int, handler: str, context: Any, request: Any) -> None:
        try:
            answer = await getattr(self.apis, handler)(context, request)
        except asyncio.CancelledError:
            self.outcomes[call] = {"cancelled": True}
            raise
        except Exception as exc:
            self.outcomes[call] = {"raised": type(exc).__name__}
            return
        self.outcomes[call] = {"response": encode_entity(answer)}

    async def run(self) -> dict[str, Any]:
        init = apis = None
        calls: dict[int, dict[str, Any]] = {}
        for event in self.events:
            kind = event["event"]
            if "t" in event:
                self.now_ms = event["t"]
            if kind == "init":
                init = event
            elif kind == "apis":
                assert init is not None
                apis = event
                self._build(init, apis)
            elif kind == "load":
                self._load(event["groups"])
            elif kind == "holds":
                self.apis.holds.shown = dict(event["shown"])
                self.apis.holds.hidden = frozenset(event["hidden"])
            elif kind == "call":
                calls[event["call"]] = event
                self._call(event)
            elif kind == "relayed" or kind == "relay_cancelled":
                key = (event["call"], event["k"])
                self.relay_done.add(key)
                if kind == "relay_cancelled" and self.final.get(event["call"]) == "cancelled":
                    continue  # its handler is cancelled next: nothing answers the relay
                future = self.relay_waiting.pop(key, None)
                if future is not None and not future.done():
                    future.set_result(None)
            elif kind == "written":
                self.writes_done.add(event["n"])
                future = self.write_waiting.pop(event["n"], None)
                if future is not None and not future.done():
                    future.set_result(None)
            elif kind == "tick":
                self.runtime._tick()
            elif kind == "cancelled":
                task = self.tasks.get(event["call"])
                if task is not None:
                    task.cancel()
            await self._idle()
        unfinished = [call for call, task in self.tasks.items() if not task.done()]
        for call in unfinished:
            self.tasks[call].cancel()
        await self._idle()
        for call in unfinished:  # still waiting when the recording ended
            self.outcomes[call] = {"pending": True}
        if self.apis is not None:
            self.runtime.close()
        return {"session": self.session["session"], "test": self.session["test"],
                "outcomes": {str(c): self.outcomes.get(c, {"pending": True}) for c in calls},
                "writes": self.writes, "notes": self.notes}

    def _load(self, groups: dict[str, str]) -> None:
        from msgspec import msgpack

        decoded = {g: msgpack.decode(base64.b64decode(v), type=self.m.records.GroupRecord) for g, v in groups.items()}
        self.runtime.load(decoded)

    def _call(self, event: dict[str, Any]) -> None:
        m = self.m
        head = m.wire.RequestHead(event["api_key"], event["version"], event["correlation_id"])
        context = m.handlers.RequestContext(head, event["client_id"], event["client"], event["connection_id"],
                                            self._relay(event["call"]) if event["relay"] else None)
        request = decode_entity("request", event["api_key"], event["version"], event["request"])
        self.tasks[event["call"]] = asyncio.ensure_future(self._handle(event["call"], event["handler"], context,
                                                                       request))


class _ReplayTime:
    """``time`` for the replayed adapter: ``monotonic`` is the replay's clock (see :class:`_FrozenTime`)."""

    def __init__(self, replay: _Replay) -> None:
        self._replay = replay

    def monotonic(self) -> float:
        return self._replay.now_ms / 1000


class _ReplayStore:
    """The store of a replay: a write done where the recording's was (or failed as it did)."""

    def __init__(self, replay: _Replay) -> None:
        self.replay = replay
        self.numbers = itertools.count(1)

    async def write(self, records: Any) -> None:
        number = next(self.numbers)
        self.replay.writes.append([[g, _b64(v)] for g, v in records])
        recorded = self.replay.write_events.get(number)
        if recorded is None:
            self.replay.notes.append(f"write {number} not in the recording")
            return
        if number not in self.replay.writes_done:
            future = asyncio.get_running_loop().create_future()
            self.replay.write_waiting[number] = future
            await future
        if recorded["error"] is not None:
            raise RuntimeError(recorded["error"][1])


def replay_session(session: dict[str, Any], modules: _Modules | None = None) -> dict[str, Any]:
    """The outputs of one recorded session replayed into the code at hand."""
    import logging

    logging.getLogger("zkconsumer").setLevel(logging.CRITICAL)
    return asyncio.run(_Replay(session, modules or _Modules()).run())


def recorded_outputs(session: dict[str, Any]) -> dict[str, Any]:
    """A recorded session's outputs, in the shape of :func:`replay_session`'s (pure)."""
    outcomes: dict[str, dict[str, Any]] = {}
    for event in session["events"]:
        if event["event"] == "call":
            outcomes[str(event["call"])] = {"pending": True}
        elif event["event"] == "answer":
            outcomes[str(event["call"])] = ({"response": event["response"]} if "response" in event
                                            else {"raised": event["raised"][0]})
        elif event["event"] == "cancelled":
            outcomes[str(event["call"])] = {"cancelled": True}
    writes = [e["records"] for e in session["events"] if e["event"] == "write"]
    return {"session": session["session"], "test": session["test"], "outcomes": outcomes, "writes": writes,
            "notes": []}


# --- comparing (pure) ----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Difference:
    session: str
    test: str
    what: str  # "answer N" or "write N"
    api: str
    request: str
    expected: str
    actual: str


def _shown(kind: str, api_key: int, version: int, outcome: Any) -> str:
    if isinstance(outcome, dict) and "response" in outcome:
        try:
            return repr(decode_entity(kind, api_key, version, outcome["response"]))
        except Exception:  # noqa: BLE001 - shown as bytes
            return outcome["response"]
    return json.dumps(outcome)


def compare(session: dict[str, Any], expected: dict[str, Any], actual: dict[str, Any]) -> list[Difference]:
    """Where ``actual`` (a replay's outputs) differs from ``expected`` (the recording's, or another replay's), answer
    by answer and write by write (pure)."""
    calls = {str(e["call"]): e for e in session["events"] if e["event"] == "call"}
    found: list[Difference] = []
    for call, want in expected["outcomes"].items():
        got = actual["outcomes"].get(call, {"missing": True})
        if got != want:
            event = calls[call]
            api = f"{API_NAMES.get(event['api_key'], event['api_key'])} v{event['version']}"
            request = _shown("request", event["api_key"], event["version"], {"response": event["request"]})
            found.append(Difference(session["session"], session["test"], f"answer {call}", api, request,
                                    _shown("response", event["api_key"], event["version"], want),
                                    _shown("response", event["api_key"], event["version"], got)))
    if expected["writes"] != actual["writes"]:
        for n, (want, got) in enumerate(itertools.zip_longest(expected["writes"], actual["writes"]), 1):
            if want != got:
                found.append(Difference(session["session"], session["test"], f"write {n}", "records", "",
                                        json.dumps(want), json.dumps(got)))
    return found


def summary(sessions: list[dict[str, Any]], expected: list[dict[str, Any]], actual: list[dict[str, Any]],
            label: str) -> tuple[list[str], list[Difference]]:
    """One line per test and a total line, and the differences (pure)."""
    per_test: dict[str, Counter[str]] = {}
    differences: list[Difference] = []
    for session, want, got in zip(sessions, expected, actual, strict=True):
        found = compare(session, want, got)
        differences += found
        counts = per_test.setdefault(session["test"].split("::")[0], Counter())
        counts["exchanges"] += len(want["outcomes"])
        counts["writes"] += len(want["writes"])
        counts["sessions"] += 1
        counts["differences"] += len(found)
        counts["notes"] += len(got["notes"])
    lines = [f"{test}: {c['exchanges']} exchanges, {c['writes']} writes in {c['sessions']} runtimes: "
             + ("identical" if not c["differences"] else f"{c['differences']} differ")
             + (f" ({c['notes']} replay notes)" if c["notes"] else "")
             for test, c in sorted(per_test.items())]
    exchanges = sum(c["exchanges"] for c in per_test.values())
    writes = sum(c["writes"] for c in per_test.values())
    tail = "all identical" if not differences else f"{len(differences)} differ"
    lines.append(f"{label}: {exchanges} exchanges and {writes} record writes from {len(per_test)} tests "
                 f"({len(sessions)} runtimes): {tail}")
    return lines, differences


def describe(difference: Difference) -> str:
    return (f"  {difference.test} [{difference.session}] {difference.what} {difference.api}\n"
            f"    request:  {difference.request}\n    expected: {difference.expected}\n"
            f"    actual:   {difference.actual}")


# --- files and commits -------------------------------------------------------------------------------------------


def read_sessions(path: Path) -> list[dict[str, Any]]:
    with path.open() as lines:
        return [json.loads(line) for line in lines if line.strip()]


def digest(outputs: dict[str, Any]) -> str:
    """A short fingerprint of a session's answers and writes (what the results file keeps of each session)."""
    kept = {"outcomes": outputs["outcomes"], "writes": outputs["writes"]}
    return f"{zlib.crc32(json.dumps(kept, sort_keys=True).encode()):08x}"


@contextlib.contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """A temporary detached ``git worktree`` of ``commit``, removed after."""
    place = Path(tempfile.mkdtemp(prefix=f"front-replay-{commit[:8]}-"))
    place.rmdir()
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(place), commit], check=True,
                   capture_output=True)
    try:
        yield place
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(place)], check=False,
                       capture_output=True)
        shutil.rmtree(place, ignore_errors=True)


def _group_apis_path(tree: Path) -> Path:
    for relative in ("zkconsumer/front/proxy/group_apis.py", "zkconsumer/front/group_apis.py"):
        if (tree / relative).exists():
            return tree / relative
    raise FileNotFoundError("no group_apis.py")


def record(commit: str, tests: Iterable[str], out: Path) -> None:
    """Run ``tests`` at ``commit`` with the shim hooked in; their sessions written to ``out`` (JSON lines)."""
    with worktree(commit) as tree, tempfile.TemporaryDirectory(prefix="front-replay-events-") as events:
        shutil.copy(Path(__file__), tree / "_front_replay_shim.py")
        with _group_apis_path(tree).open("a") as module:
            module.write("\n\nimport sys as _replay_sys  # noqa: E402\n\nimport _front_replay_shim  # noqa: E402\n\n"
                         "_front_replay_shim.install_recorder(_replay_sys.modules[__name__])\n")
        env = {**os.environ, "PYTHONPATH": str(tree), RECORD_ENV: events}
        for test in tests:
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                                   "-p", "no:randomly", test], cwd=tree, env=env, capture_output=True, text=True)
            last = (done.stdout.strip().splitlines() or [""])[-1]
            print(f"recorded {test} at {commit}: {last} ({time.monotonic() - started:.0f} s)", flush=True)
        lines = [json.loads(line) for path in sorted(Path(events).glob("*.jsonl"))
                 for line in path.read_text().splitlines() if line.strip()]
    sessions = sessions_of(lines)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as file:
        for session in sessions:
            file.write(json.dumps(session, separators=(",", ":")) + "\n")
    print(f"{len(sessions)} runtimes, {sum(1 for line in lines if line['event'] == 'call')} exchanges -> {out}")


def replay_here(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Every session replayed into the code this process imports."""
    modules = _Modules()
    import zkconsumer

    return {"code": str(Path(zkconsumer.__file__).parent),
            "sessions": [replay_session(session, modules) for session in sessions]}


def replay_at(commit: str | None, recording: Path) -> dict[str, Any]:
    """The recording replayed into ``commit`` (in a process of its own), or into this checkout (``None``)."""
    if commit is None:
        tree = ROOT
        context: contextlib.AbstractContextManager[Path] = contextlib.nullcontext(tree)
    else:
        context = worktree(commit)
    with context as tree, tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "replayed.json"
        subprocess.run([sys.executable, str(Path(__file__)), "replay", "--recording", str(recording.resolve()),
                        "-o", str(out)], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True)
        replayed = json.loads(out.read_text())
    if not replayed["code"].startswith(str(tree)):
        raise RuntimeError(f"replayed into {replayed['code']}, not {tree}")
    return replayed


def compare_commits(recording: Path, commits: tuple[str, ...], results: Path | None) -> int:
    sessions = read_sessions(recording)
    expected = [recorded_outputs(s) for s in sessions]
    status = 0
    digests: dict[str, Any] = {"recording": str(recording.relative_to(ROOT)) if recording.is_relative_to(ROOT)
                               else str(recording), "recorded": [digest(e) for e in expected], "replays": {}}
    for commit in commits:
        actual = replay_at(commit, recording)["sessions"]
        lines, differences = summary(sessions, expected, actual, f"recorded at {BEFORE}, replayed into {commit}")
        print("\n".join(lines))
        for difference in differences:
            print(describe(difference))
        status |= bool(differences)
        digests["replays"][commit] = {"digests": [digest(a) for a in actual], "summary": lines[-1],
                                      "differences": [dataclasses.asdict(d) for d in differences],
                                      "notes": sorted({n for a in actual for n in a["notes"]})}
    if results is not None:
        results.write_text(json.dumps(digests, indent=1) + "\n")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="record the tests' exchanges at a commit")
    rec.add_argument("--commit", default=BEFORE)
    rec.add_argument("--test", action="append", help="a test file (default: the recorded ones)")
    rec.add_argument("-o", "--out", type=Path, default=RECORDING)
    rep = commands.add_parser("replay", help="replay a recording into this process's code, or a commit's")
    rep.add_argument("--recording", type=Path, default=RECORDING)
    rep.add_argument("--commit")
    rep.add_argument("-o", "--out", type=Path, required=True)
    cmp_ = commands.add_parser("compare", help="replay a recording into commits and compare with it")
    cmp_.add_argument("--recording", type=Path, default=RECORDING)
    cmp_.add_argument("--commit", action="append", help=f"default: {BEFORE} (the control) and {AFTER}")
    cmp_.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.commit, args.test or TESTS, args.out)
        return 0
    if args.command == "replay":
        recording = args.recording
        replayed = replay_at(args.commit, recording) if args.commit else replay_here(read_sessions(recording))
        args.out.write_text(json.dumps(replayed) + "\n")
        return 0
    return compare_commits(args.recording, tuple(args.commit or (BEFORE, AFTER)), args.results)


if __name__ == "__main__":
    sys.exit(main())

"""Applications the plugin's tests give the members (``migration_apps:record``...): each keeps what it processed
in its state directory, one file per member process."""

from __future__ import annotations

import os
import time
from pathlib import Path

REVOKED = "revoked"


def _state(name: str) -> Path:
    return Path(os.environ["ZKCONSUMER_STATE_DIR"]) / f"{name}-{os.getpid()}.txt"


def record(message) -> None:
    with open(_state("processed"), "a") as out:
        out.write(f"{message.value.decode()}\n")


def on_revoke(partitions) -> None:
    with open(_state(REVOKED), "a") as out:
        out.write(f"{partitions}\n")


def on_assign(partitions) -> None:
    with open(_state("assigned"), "a") as out:
        out.write(f"{partitions}\n")


def refuse_sevens(message) -> None:
    """Raises on every message whose sequence ends in 7, on every attempt: those are given up."""
    if message.value.decode().endswith("7"):
        raise ValueError(f"cannot process {message.value.decode()}")
    record(message)


def read_values(state: Path) -> list[str]:
    return [line for f in state.glob("processed-*.txt") for line in f.read_text().splitlines()]


def record_keyed(message) -> None:
    """Keeps each message's key and value, with the time it processed it (the order across member processes)."""
    _keep([message])


_held: list = []


def reverse_in_fives(message) -> None:
    """Buffers five messages, then processes them last first: it reorders messages within their key."""
    _held.append(message)
    if len(_held) == 5:
        _keep(reversed(_held))
        _held.clear()


def _keep(messages) -> None:
    with open(_state("keyed"), "a") as out:
        for m in messages:
            out.write(f"{time.time():.6f} {m.key.decode()} {m.value.decode()}\n")


def read_keyed(state: Path) -> list[tuple[str, str]]:
    """The (key, value) pairs the application processed, in the order it processed them, over every process."""
    rows = [line.split(" ", 2) for f in state.glob("keyed-*.txt") for line in f.read_text().splitlines()]
    return [(key, value) for _, key, value in sorted(rows, key=lambda row: float(row[0]))]

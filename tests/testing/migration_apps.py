"""Applications the plugin's tests give the members (``migration_apps:record``...): each keeps what it processed
in its state directory, one file per member process."""

from __future__ import annotations

import os
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

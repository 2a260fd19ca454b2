"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], object], timeout: float = 15.0, interval: float = 0.05) -> object:
    """Poll until ``predicate`` returns something truthy; fail the test with its last value otherwise."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s (last value: {value!r})")
        time.sleep(interval)
        value = predicate()
    return value


def zkconsumer_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run the real ``zkconsumer`` command in a child process, as a user would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "zkconsumer", *args], capture_output=True, text=True, env=full_env, timeout=timeout
    )

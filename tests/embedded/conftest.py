"""Fixtures of the embedded environment's tests."""

from __future__ import annotations

import pytest
from support import zkconsumer_cli


@pytest.fixture
def run_dir(tmp_path):
    """A run directory for `zkconsumer local`, always torn down, whatever the test did."""
    path = tmp_path / "run"
    yield path
    if (path / "state.json").exists():
        zkconsumer_cli("local", "down", "--run-dir", str(path))

"""The front's launcher: a start that fails or is interrupted leaves no front behind, and a stopped launcher starts a
new front on the port that front takes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import answers_api_versions


def running(pid: int) -> bool:
    """Whether ``pid`` is a process at all (a zombie counts: it is not cleaned up)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists()


class InterruptedOnceUp(FrontProcess):
    """A front whose start-up wait is interrupted by ``error`` once the front answers, so a real front is running."""

    def __init__(self, bootstrap: str, workdir: Path, error: BaseException) -> None:
        super().__init__(bootstrap, workdir)
        self.error = error
        self.seen_pid: int | None = None

    def _ready(self) -> bool:
        if not super()._ready():
            return False
        self.seen_pid = self.pid
        raise self.error


@pytest.mark.parametrize("error", [KeyboardInterrupt(), RuntimeError("the probe failed")],
                         ids=lambda error: type(error).__name__)
def test_an_interrupted_start_leaves_no_front(broker_bootstrap, tmp_path, error):
    front = InterruptedOnceUp(broker_bootstrap, tmp_path / "front", error)
    with pytest.raises(type(error)):
        front.start(timeout=bounded(60.0))
    assert front.seen_pid is not None, "the front never answered, so nothing was interrupted"
    assert not running(front.seen_pid)
    assert front.pid is None and front.port is None


def test_a_stopped_launcher_starts_a_new_front(broker_bootstrap, tmp_path):
    front = FrontProcess(broker_bootstrap, tmp_path / "front")
    with front:
        first_pid = front.pid
    assert first_pid is not None and not running(first_pid)
    assert front.port is None
    with front:
        assert front.pid != first_pid
        assert answers_api_versions(front.address)
        second_pid = front.pid
    assert second_pid is not None and not running(second_pid)

"""The package as an outside project installs it: its wheel, built from a copy of the sources (so the work tree gets
no ``build/``), installed with the extras asked for from the package index (pip's cache makes a second install take
seconds) into a virtual environment that sees nothing of this one. Shared by tests/test_install.py (no extra) and
tests/testing/test_example_project.py (the ``testing`` extra)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from time_scale import bounded

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class FreshEnvironment:
    root: Path
    workdir: Path  # an empty directory: nothing of the repository is importable from it

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    @property
    def zkconsumer(self) -> str:
        return str(self.root / "bin" / "zkconsumer")

    def run(self, *argv: str, timeout: float = 60.0, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        # The environment's own interpreter only: no PYTHONPATH, no activated virtual environment leaking in.
        clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        return subprocess.run(argv, capture_output=True, text=True, cwd=cwd or self.workdir,
                              env={**clean, **(env or {})}, timeout=bounded(timeout))


def pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "--quiet", *args], capture_output=True, text=True,
                          timeout=bounded(540))  # the wheel's build and the install share the module's 600 s
    assert done.returncode == 0, f"pip {' '.join(args)}:\n{done.stdout}\n{done.stderr}"


def fresh_environment(base: Path, extras: str = "") -> FreshEnvironment:
    """A virtual environment under ``base`` with the wheel installed (``extras``: ``testing``, or none)."""
    source = base / "source"
    shutil.copytree(REPO / "zkconsumer", source / "zkconsumer", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, source / name)
    pip("wheel", "--no-deps", "--wheel-dir", str(base / "dist"), str(source))
    (wheel,) = (base / "dist").glob("zkconsumer-*.whl")
    # No pip inside: this environment's pip installs into it (--python), which saves seconds per run.
    venv.create(base / "venv", with_pip=False)
    fresh = FreshEnvironment(base / "venv", base / "work")
    fresh.workdir.mkdir()
    pip("--python", fresh.python, "install", f"{wheel}[{extras}]" if extras else str(wheel))
    return fresh

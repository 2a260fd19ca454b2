"""The package as an outside project installs it: its wheel, built from a copy of the sources (so the work tree gets
no ``build/``), installed with the extras asked for from the package index into a virtual environment that sees
nothing of this one. uv builds and installs where the suite's environment has it (scripts/bootstrap.sh installs it
there), a tenth of pip's CPU for the same wheel and packages (docs/development.md, session 25); pip otherwise.
Shared by tests/test_install.py (no extra) and tests/testing/test_example_project.py (the ``testing`` extra)."""

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


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True,
                          timeout=bounded(540))  # the wheel's build and the install share the module's 600 s
    assert done.returncode == 0, f"{what}:\n{done.stdout}\n{done.stderr}"


def _uv() -> Path | None:
    """The suite's environment's uv, where it has one."""
    uv = Path(sys.executable).parent / "uv"
    return uv if uv.exists() else None


def build_wheel(source: Path, dist: Path) -> None:
    uv = _uv()
    if uv is not None:
        _run([str(uv), "build", "--quiet", "--wheel", "--out-dir", str(dist), str(source)], "uv build")
    else:
        _run([sys.executable, "-m", "pip", "--quiet", "wheel", "--no-deps", "--wheel-dir", str(dist), str(source)],
             "pip wheel")


def install(python: str, requirement: str) -> None:
    """``requirement`` into the environment of ``python`` (which has no pip of its own: saves seconds per run)."""
    uv = _uv()
    if uv is not None:
        _run([str(uv), "pip", "install", "--quiet", "--python", python, requirement], "uv pip install")
    else:
        _run([sys.executable, "-m", "pip", "--quiet", "--python", python, "install", requirement], "pip install")


def fresh_environment(base: Path, extras: str = "") -> FreshEnvironment:
    """A virtual environment under ``base`` with the wheel installed (``extras``: ``testing``, or none)."""
    source = base / "source"
    shutil.copytree(REPO / "zkconsumer", source / "zkconsumer", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, source / name)
    build_wheel(source, base / "dist")
    (wheel,) = (base / "dist").glob("zkconsumer-*.whl")
    venv.create(base / "venv", with_pip=False)
    fresh = FreshEnvironment(base / "venv", base / "work")
    fresh.workdir.mkdir()
    install(fresh.python, f"{wheel}[{extras}]" if extras else str(wheel))
    return fresh

"""Where the embedded environment keeps its files and the command line its log: one directory per virtual
environment, so that two checkouts on one machine never share servers, topics, groups or logs. Standard library
only: every command reads it, including those of an installation without the ``embedded`` extra."""

from __future__ import annotations

import os
import sys
from pathlib import Path

RUN_DIR_ENV = "ZKCONSUMER_RUN_DIR"


def default_run_dir_and_origin() -> tuple[Path, str]:
    """The default run directory, and in a few words where it comes from (``local status`` says it):
    ``$ZKCONSUMER_RUN_DIR``, else ``var/zkconsumer`` in the virtual environment zkconsumer runs in, else
    ``zkconsumer`` in the user's state directory (``$XDG_STATE_HOME``, ``~/.local/state``).

    A project checkout has a virtual environment of its own (``.venv``), so its environment, topics and groups are
    not those of another checkout on the same machine; an installation outside any virtual environment is the
    user's, and so is its run directory."""
    if os.environ.get(RUN_DIR_ENV):
        return Path(os.environ[RUN_DIR_ENV]), f"${RUN_DIR_ENV}"
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "var" / "zkconsumer", f"the default of the virtual environment {sys.prefix}"
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "zkconsumer", "the default of this user, outside any virtual environment"

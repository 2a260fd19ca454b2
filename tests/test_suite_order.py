"""The modules conftest.py hands out first (suite_order.LONG_MODULES) are modules of the suite: one renamed or
removed would silently go back to its place in the collection, and start last."""

from __future__ import annotations

from pathlib import Path

from suite_order import LONG_MODULES

ROOT = Path(__file__).resolve().parent.parent


def test_every_module_handed_out_first_exists_once():
    assert [m for m in LONG_MODULES if not (ROOT / m).is_file()] == []
    assert len(set(LONG_MODULES)) == len(LONG_MODULES)

"""The modules conftest.py hands out first (suite_order.LONG_MODULES) are modules of the suite: one renamed or
removed would silently go back to its place in the collection, and start last."""

from __future__ import annotations

from pathlib import Path

from suite_order import LONG_MODULES, SHARED_SERVERS, unit_of, unlisted

ROOT = Path(__file__).resolve().parent.parent


def test_every_module_handed_out_first_exists_once():
    assert [m for m in LONG_MODULES if not (ROOT / m).is_file()] == []
    assert len(set(LONG_MODULES)) == len(LONG_MODULES)


def test_the_modules_that_share_a_costly_server_are_one_unit_and_a_module_not_listed_is_named():
    assert unit_of("tests/front/test_differential_restart.py::test_a[x]") == "pair"
    assert unit_of("tests/front/test_differential_groups.py::test_b") == "pair"
    assert unit_of("tests/consumer/test_connector.py::test_c") == "tests/consumer/test_connector.py"
    every = [m for modules in SHARED_SERVERS.values() for m in modules]
    assert [m for m in every if not (ROOT / m).is_file()] == [] and len(set(every)) == len(every)
    uses = {"tests/ensemble/test_failover.py": {"zk", "zookeeper_ensemble"}, "tests/new.py": {"pair", "zk"}}
    assert unlisted(uses) == ["tests/new.py uses the session fixture pair but is not listed under it in "
                              "tests/suite_order.py's SHARED_SERVERS: its server would be started again in another "
                              "worker"]

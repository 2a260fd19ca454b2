"""The tests in this folder run on a ZooKeeper ensemble of three local servers (``zookeeper_ensemble``): every
fixture built on ``zookeeper_connect`` (``zk_chroot``, ``zk``, ``kafka_zk``) gets the ensemble's connect string, which
lists all three, so a client lands on any of them and moves to another when its server goes."""

from __future__ import annotations

import pytest

from zkconsumer.embedded.ensemble import LocalEnsemble


@pytest.fixture(scope="session")
def zookeeper_connect(zookeeper_ensemble: LocalEnsemble) -> str:
    return zookeeper_ensemble.connect

"""The tests in this folder run on a ZooKeeper ensemble of three local servers (``zookeeper_ensemble``): every
fixture built on the plugin's ``zkconsumer_zookeeper`` or on ``zookeeper_connect`` (``zk_chroot``, ``zk``,
``kafka_zk``) gets the ensemble's connect string, which lists all three, so a client lands on any of them and moves to
another when its server goes."""

from __future__ import annotations

import pytest

from zkconsumer.embedded.ensemble import LocalEnsemble


@pytest.fixture(scope="session")
def zkconsumer_zookeeper(zookeeper_ensemble: LocalEnsemble) -> str:
    return zookeeper_ensemble.connect


@pytest.fixture(scope="session")
def zookeeper_connect(zkconsumer_zookeeper: str) -> str:
    return zkconsumer_zookeeper

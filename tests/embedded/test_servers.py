"""Servers given to the one provider the comparison, the demo and the plugin share: a ZooKeeper given is checked as a
client reaches it, and without a broker brings the brokers registered in it. On the session's servers; the run's own
front before a given broker is tested with the comparison's settings (migration/test_compare_run_front.py), the
embedded environment's side on the environments test_environment.py starts anyway."""

from __future__ import annotations

import pytest
from support import wait_for

from zkconsumer.embedded.servers import ServerOptions, provide_servers
from zkconsumer.errors import ServerUnavailableError, UsageError
from zkconsumer.zk.client import zookeeper


def test_a_given_zookeeper_without_a_broker_brings_the_brokers_registered_in_it(kafka_zk, bootstrap_servers):
    with zookeeper(kafka_zk) as zk:  # the bridge registers the broker as clients reach it: through the front
        wait_for(lambda: zk.exists("/brokers/ids") and zk.get_children("/brokers/ids"))
    with provide_servers(ServerOptions(zookeeper=kafka_zk)) as servers:
        assert servers.zookeeper == kafka_zk and servers.bootstrap == servers.broker == bootstrap_servers
        assert servers.front_log is None and servers.environment is None


def test_a_given_zookeeper_is_refused_in_one_line_naming_the_option(zk_chroot):
    missing = f"{zk_chroot}/no-such-chroot"
    with pytest.raises(ServerUnavailableError) as raised, provide_servers(ServerOptions(zookeeper=missing)):
        pass
    assert str(raised.value).startswith(f"--zookeeper {missing}: ") and "\n" not in str(raised.value)
    with pytest.raises(UsageError, match="no broker is registered in ZooKeeper at .*; give --bootstrap-server"), \
            provide_servers(ServerOptions(zookeeper=zk_chroot)):
        pass

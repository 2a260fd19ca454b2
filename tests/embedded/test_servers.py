"""Servers given to the one provider the comparison, the demo and the plugin share: a ZooKeeper given is checked as a
client reaches it, and without a broker brings the brokers registered in it; a front of the run's own stands before a
broker given to be fronted for the block only. On the session's servers (the embedded environment's side is in
test_environment.py, on the environments those tests start anyway)."""

from __future__ import annotations

import pytest
from support import wait_for

from zkconsumer.embedded.servers import ServerOptions, provide_servers
from zkconsumer.errors import ServerUnavailableError, UsageError
from zkconsumer.kafka.metadata import broker_answers
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


def test_a_front_of_the_run_s_own_stands_before_a_given_broker_for_the_block(zk_chroot, broker_bootstrap, tmp_path):
    options = ServerOptions(zookeeper=zk_chroot, bootstrap=broker_bootstrap, front=True, workdir=tmp_path)
    with provide_servers(options) as servers:
        assert servers.broker == broker_bootstrap != servers.bootstrap and broker_answers(servers.bootstrap)
        assert servers.front_log == tmp_path / "front" / "front.log" and servers.front_log.exists()
    assert not broker_answers(servers.bootstrap, timeout=0.5) and broker_answers(broker_bootstrap)
    with provide_servers(ServerOptions(zookeeper=zk_chroot, bootstrap=broker_bootstrap)) as given:
        assert given.bootstrap == given.broker == broker_bootstrap and given.front_log is None

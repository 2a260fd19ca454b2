"""The metadata bridge against the real broker and a real ZooKeeper (a chroot per test)."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka.admin import AdminClient
from kazoo.recipe.watchers import DataWatch
from structlog.testing import capture_logs
from support import wait_for, zkconsumer_cli
from time_scale import scaled

from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.embedded.broker import LocalTansu
from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.client import zookeeper


def broker_id_of(bootstrap: str) -> int:
    brokers = fetch_metadata(admin_client(bootstrap), bootstrap).brokers
    assert len(brokers) == 1
    return next(iter(brokers))


def recreate_with_more_partitions(bootstrap: str, topic: str, partitions: int) -> None:
    """Tansu lacks CreatePartitions; to the Metadata API a deleted and recreated topic looks like growth."""
    admin: AdminClient = admin_client(bootstrap)
    admin.delete_topics([topic])[topic].result(10)
    wait_for(lambda: topic not in fetch_metadata(admin, bootstrap).topics)
    create_topic(bootstrap, topic, partitions)


def test_mirrors_brokers_topics_and_states_as_kafka_writes_them(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 3)
    broker_id = broker_id_of(bootstrap_servers)
    host, port = bootstrap_servers.rsplit(":", 1)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge, capture_logs() as events:
        bridge.sync_once()
        data, stat = zk.get(paths.broker_path(broker_id))
        assert stat.ephemeralOwner == bridge._zk.client_id[0]
        timestamp = cluster.parse_broker(broker_id, data).timestamp
        assert data == (
            f'{{"jmx_port":-1,"timestamp":"{timestamp}","endpoints":["PLAINTEXT://{host}:{port}"],'
            f'"host":"{host}","version":3,"port":{port}}}'
        ).encode()
        assert abs(int(timestamp) - time.time() * 1000) < 60_000
        assert zk.get(paths.topic_path(topic_name))[0] == (
            f'{{"version":1,"partitions":{{"0":[{broker_id}],"1":[{broker_id}],"2":[{broker_id}]}}}}'
        ).encode()
        for p in range(3):
            assert zk.get(paths.partition_state_path(topic_name, p))[0] == (
                f'{{"controller_epoch":1,"leader":{broker_id},"version":1,"leader_epoch":0,"isr":[{broker_id}]}}'
            ).encode()
        assert zk.get(paths.topic_config_path(topic_name))[0] == b'{"version":1,"config":{}}'
        controller = zk.get(paths.CONTROLLER_PATH)[0]
        assert controller.startswith(f'{{"version":1,"brokerid":{broker_id},"timestamp":"'.encode())
        assert zk.get(paths.CONTROLLER_EPOCH_PATH)[0] == b"1"
    names = [e["event"] for e in events]
    assert "bridge.broker_registered" in names and "bridge.topic_created" in names
    created = next(e for e in events if e["event"] == "bridge.topic_created" and e["topic"] == topic_name)
    assert created["partitions_after"] == 3
    # A clean stop closes the session: the broker registration goes with it, the topic stays.
    assert zk.exists(paths.broker_path(broker_id)) is None
    assert zk.exists(paths.topic_path(topic_name)) is not None


def test_writes_nothing_when_nothing_changed(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge:
        assert bridge.sync_once()
        watched = [paths.broker_path(broker_id_of(bootstrap_servers)), paths.topic_path(topic_name),
                 paths.partition_state_path(topic_name, 0), paths.partition_state_path(topic_name, 1)]
        before = [zk.exists(p).mzxid for p in watched]
        assert bridge.sync_once() == []
        assert [zk.exists(p).mzxid for p in watched] == before


def test_partition_growth_is_one_data_change_a_watch_sees(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge:
        bridge.sync_once()
        seen: list[list[int]] = []
        DataWatch(zk, paths.topic_path(topic_name),
                  lambda data, stat: seen.append(cluster.parse_topic(topic_name, data).partitions) if data else None)
        wait_for(lambda: seen == [[0, 1]])
        recreate_with_more_partitions(bootstrap_servers, topic_name, 4)
        changes = bridge.sync_once()
        assert [c.event for c in changes] == ["bridge.partitions_added"]
        wait_for(lambda: len(seen) == 2)
        assert seen == [[0, 1], [0, 1, 2, 3]]
        # The new partitions' states were written in the same transaction, before the data change.
        for p in (2, 3):
            assert cluster.read_partition_state(zk, topic_name, p).leader == broker_id_of(bootstrap_servers)


def test_held_partitions_are_shown_later_as_growth(zk, zk_chroot, bootstrap_servers, topic_name):
    """The demo's way to add partitions on Tansu: the topic is created at its final size and held smaller."""
    create_topic(bootstrap_servers, topic_name, 4)
    with MetadataBridge(zk_chroot, bootstrap_servers, partition_limits={topic_name: 2}) as bridge:
        bridge.sync_once()
        assert cluster.read_topic(zk, topic_name).partitions == [0, 1]
        assert not zk.exists(f"{paths.topic_path(topic_name)}/partitions/2")
        assert bridge.sync_once() == []  # held is held: no growth on the next pass
        changes = bridge.show_partitions(topic_name, 4)
        assert [(c.event, c.fields["partitions_before"], c.fields["partitions_after"]) for c in changes] == [
            ("bridge.partitions_added", 2, 4)]
        assert cluster.read_topic(zk, topic_name).partitions == [0, 1, 2, 3]
        assert cluster.read_partition_state(zk, topic_name, 3).leader == broker_id_of(bootstrap_servers)


def test_leader_change_rewrites_the_state_with_the_next_epoch(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    broker_id = broker_id_of(bootstrap_servers)
    path = paths.partition_state_path(topic_name, 0)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge:
        bridge.sync_once()
        # The controller's record says another broker led, at epoch 4 of controller epoch 7.
        zk.set(path, cluster.encode_partition_state(cluster.PartitionState(5, 4, 7, (5,))))
        changes = bridge.sync_once()
        assert [(c.event, c.fields["leader"], c.fields["leader_epoch"]) for c in changes] == [
            ("bridge.leader_changed", broker_id, 5)
        ]
        assert cluster.read_partition_state(zk, topic_name, 0) == cluster.PartitionState(broker_id, 5, 7, (broker_id,))


def test_restarts_cleanly(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    broker_path = paths.broker_path(broker_id_of(bootstrap_servers))
    with MetadataBridge(zk_chroot, bootstrap_servers) as first:
        first.sync_once()
    topic_version = zk.exists(paths.topic_path(topic_name)).version
    assert zk.exists(broker_path) is None
    with MetadataBridge(zk_chroot, bootstrap_servers) as second:
        changes = second.sync_once()
        assert "bridge.broker_registered" in [c.event for c in changes]
        assert not [c for c in changes if getattr(c, "topic", None) == topic_name]
        assert zk.exists(broker_path).ephemeralOwner == second._zk.client_id[0]
    assert zk.exists(paths.topic_path(topic_name)).version == topic_version


def test_deletes_only_topics_it_saw_in_the_cluster(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    zk.create(paths.topic_path("foreign"), b'{"version":1,"partitions":{"0":[1]}}', makepath=True)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge:
        bridge.sync_once()
        admin = admin_client(bootstrap_servers)
        admin.delete_topics([topic_name])[topic_name].result(10)
        wait_for(lambda: topic_name not in fetch_metadata(admin, bootstrap_servers).topics)
        changes = bridge.sync_once()
        assert [(c.event, c.fields["topic"]) for c in changes] == [("bridge.topic_deleted", topic_name)]
    assert zk.exists(paths.topic_path(topic_name)) is None
    assert zk.exists(paths.topic_config_path(topic_name)) is None
    assert zk.get(paths.topic_path("foreign"))[0] == b'{"version":1,"partitions":{"0":[1]}}'


def test_never_takes_over_another_sessions_registration(zk, zk_chroot, bootstrap_servers):
    broker_id = broker_id_of(bootstrap_servers)
    path = paths.broker_path(broker_id)
    foreign = b'{"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://elsewhere:9092"],"host":"elsewhere","version":3,"port":9092}'
    with zookeeper(zk_chroot) as other_session:
        other_session.create(path, foreign, ephemeral=True, makepath=True)
        with MetadataBridge(zk_chroot, bootstrap_servers) as bridge, capture_logs() as events:
            bridge.sync_once()
            bridge.sync_once()
            assert zk.get(path)[0] == foreign
            conflicts = [e for e in events if e["event"] == "bridge.broker_conflict"]
            assert len(conflicts) == 1 and conflicts[0]["broker_id"] == broker_id  # reported once, not per pass
            other_session.stop()  # that session ends: its ephemeral node goes, and the id is free
            wait_for(lambda: zk.exists(path) is None)
            bridge.sync_once()
            assert zk.exists(path).ephemeralOwner == bridge._zk.client_id[0]


def test_malformed_znodes_are_reported_and_left_untouched(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    zk.create(paths.topic_path(topic_name), b"garbage", makepath=True)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge, capture_logs() as events:
        bridge.sync_once()
    assert zk.get(paths.topic_path(topic_name))[0] == b"garbage"
    assert {"event": "bridge.malformed_znode", "path": f"/brokers/topics/{topic_name}"}.items() <= next(
        e for e in events if e["event"] == "bridge.malformed_znode"
    ).items()


class FailingPasses(MetadataBridge):
    """A bridge whose first passes fail as no pass is expected to (a defect in a later change, say)."""

    failures = 3

    def _apply(self, snapshot):
        if self.failures:
            self.failures -= 1
            raise RuntimeError("a pass that breaks")
        return super()._apply(snapshot)


def test_passes_failing_unexpectedly_are_reported_once_and_the_loop_goes_on_and_says_when_one_succeeds(
        zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    bridge = FailingPasses(zk_chroot, bootstrap_servers, interval_ms=50)
    with capture_logs() as events, bridge.running():
        wait_for(lambda: zk.exists(paths.topic_path(topic_name)), timeout=30)
    assert bridge.failures == 0
    failed = [e for e in events if e["event"] == "bridge.pass_failed"]
    assert len(failed) == 1 and failed[0]["error"] == "RuntimeError: a pass that breaks"
    assert failed[0]["log_level"] == "error" and failed[0]["exc_info"] is True
    recovered = [e for e in events if e["event"] == "bridge.pass_recovered"]
    assert [e["failed_passes"] for e in recovered] == [3]


def test_survives_the_broker_going_away_and_coming_back(tmp_path, zk, zk_chroot):
    tansu = LocalTansu(tmp_path / "tansu")
    tansu.start()
    try:
        broker_id = broker_id_of(tansu.bootstrap)
        create_topic(tansu.bootstrap, "before-outage", 1)
        with MetadataBridge(zk_chroot, tansu.bootstrap, interval_ms=100, broker_timeout_ms=1000,
                            connect_timeout=2.0).running():
            wait_for(lambda: zk.exists(paths.broker_path(broker_id)))
            wait_for(lambda: zk.exists(paths.topic_path("before-outage")))
            tansu.stop()
            # As the broker's session would have expired: its registration and the controller go.
            wait_for(lambda: zk.exists(paths.broker_path(broker_id)) is None)
            wait_for(lambda: zk.exists(paths.CONTROLLER_PATH) is None)
            assert zk.exists(paths.topic_path("before-outage")) is not None
            tansu = LocalTansu(tmp_path / "tansu", tansu.port)
            tansu.start()
            wait_for(lambda: zk.exists(paths.broker_path(broker_id)))
            # The restarted broker keeps topics in memory only, so the old topic is gone from it and from ZooKeeper.
            wait_for(lambda: zk.exists(paths.topic_path("before-outage")) is None)
            create_topic(tansu.bootstrap, "after-outage", 2)
            wait_for(lambda: zk.exists(paths.partition_state_path("after-outage", 1)))
    finally:
        tansu.stop()


def test_survives_zookeeper_going_away_and_coming_back(tmp_path, bootstrap_servers, topic_name):
    server = LocalZooKeeper(tmp_path / "zk")
    server.start()
    broker_path = paths.broker_path(broker_id_of(bootstrap_servers))
    try:
        with MetadataBridge(server.connect, bootstrap_servers, interval_ms=100, connect_timeout=2.0).running():
            with zookeeper(server.connect) as zk:
                wait_for(lambda: zk.exists(broker_path))
            server.stop()
            time.sleep(3)  # longer than the bridge's 2 s session: it comes back with a new one
            server = LocalZooKeeper(tmp_path / "zk", server.port)
            server.start()
            with zookeeper(server.connect) as zk:
                wait_for(lambda: zk.exists(broker_path), timeout=30)
                create_topic(bootstrap_servers, topic_name, 1)
                wait_for(lambda: zk.exists(paths.partition_state_path(topic_name, 0)))
    finally:
        server.stop()


def test_cli_once_mirrors_topics_and_logs_json_events(zk, zk_chroot, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    result = zkconsumer_cli(
        "--log-json", "bridge", "--zookeeper", zk_chroot, "--bootstrap-server", bootstrap_servers, "--once"
    )
    assert result.returncode == 0, result.stderr
    assert cluster.read_topic(zk, topic_name).partitions == [0, 1]
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    created = [e for e in events if e["event"] == "bridge.topic_created" and e["topic"] == topic_name]
    assert created and created[0]["partitions_after"] == 2 and created[0]["zookeeper"] == zk_chroot
    assert {"timestamp", "level"} <= created[0].keys()


@pytest.mark.parametrize("side", ["zookeeper", "broker"])
def test_cli_unreachable_server_fails_clearly(side, zk_chroot, bootstrap_servers):
    from zkconsumer.embedded.process import free_port

    dead = f"127.0.0.1:{free_port()}"
    zk_arg, bootstrap_arg = (dead, bootstrap_servers) if side == "zookeeper" else (zk_chroot, dead)
    started = time.monotonic()
    result = zkconsumer_cli("bridge", "--zookeeper", zk_arg, "--bootstrap-server", bootstrap_arg, "--once")
    assert result.returncode == 1
    assert time.monotonic() - started < scaled(30)  # within the connection timeout, not a hang
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("zkconsumer bridge: ") and dead in last
    assert "ZooKeeper" in last if side == "zookeeper" else "broker" in last


def test_a_topic_of_six_thousand_partitions_is_written_in_batches_zookeeper_accepts(zk):
    """One transaction for 6,000 partition states (about 1.1 MB) is larger than a default server accepts (it drops the
    connection); the bridge writes such a topic in batches, the topic znode first, as a controller would."""
    from zkconsumer.bridge.metadata_bridge import apply_change
    from zkconsumer.bridge.plan import WriteTopic

    def data(count: int) -> bytes:
        return json.dumps({"version": 1, "partitions": {str(p): [0] for p in range(count)}}).encode()

    state = b'{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}'
    apply_change(zk, WriteTopic("bridge.topic_created", "wide", data(6_000), None,
                                {p: state for p in range(6_000)}))
    assert len(zk.get_children(paths.topic_partitions_path("wide"))) == 6_000
    assert zk.get(paths.partition_state_path("wide", 5_999))[0] == state

    version = zk.exists(paths.topic_path("wide")).version
    apply_change(zk, WriteTopic("bridge.topic_changed", "wide", data(6_500), version,
                                {p: state for p in range(6_000, 6_500)}))
    assert len(json.loads(zk.get(paths.topic_path("wide"))[0])["partitions"]) == 6_500
    assert zk.exists(paths.partition_state_path("wide", 6_499)) is not None


def test_creates_a_brokers_persistent_paths_with_null_parents_and_keeps_the_content(zk, zk_chroot, bootstrap_servers,
                                                                                    topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    broker_id = broker_id_of(bootstrap_servers)
    with MetadataBridge(zk_chroot, bootstrap_servers) as bridge, capture_logs() as events:
        bridge.sync_once()
        parents = {*paths.BROKER_PERSISTENT_PATHS, "/brokers", "/config", "/admin",
                   paths.topic_partitions_path(topic_name),
                   *(paths.partition_path(topic_name, p) for p in range(2))}
        for path in sorted(parents):
            data, stat = zk.get(path)
            assert data is None and stat.dataLength == 0, path  # what ZkClient's createParents left
        # Znodes with content hold what a ZooKeeper-mode cluster writes there.
        assert cluster.parse_broker(broker_id, zk.get(paths.broker_path(broker_id))[0]).id == broker_id
        assert zk.get(paths.topic_path(topic_name))[0] == (
            f'{{"version":1,"partitions":{{"0":[{broker_id}],"1":[{broker_id}]}}}}').encode()
        assert cluster.read_partition_state(zk, topic_name, 1).leader == broker_id
        assert zk.get(paths.topic_config_path(topic_name))[0] == b'{"version":1,"config":{}}'
        bridge.sync_once()
    created = [e["paths"] for e in events if e["event"] == "bridge.paths_created"]
    assert created == [list(paths.BROKER_PERSISTENT_PATHS)]  # once, all of them: the chroot was empty

"""ZooKeeper digest authentication and ACLs against the real server: what the consumer creates only its identity
may change, everyone may still read it (the tools), another identity's attempts neither succeed nor stop the
member, and wrong credentials fail at construction in one line without the secret."""

from __future__ import annotations

import json

import pytest
from kazoo.exceptions import NoAuthError
from kazoo.security import Permissions
from structlog.testing import capture_logs
from support import produce, take, wait_for

from zkconsumer import ConsumerConfig, create_connector
from zkconsumer.cli import main
from zkconsumer.errors import AuthenticationError
from zkconsumer.kafka.topics import create_topic
from zkconsumer.security import parse_auth
from zkconsumer.zk.client import close_client, open_client

GROUP = "secured"
ALICE = "digest:alice:alice-secret-1"
MALLORY = "digest:mallory:mallory-pw"


def config(zk_connect: str, consumer_id: str, auth: str | None = ALICE) -> ConsumerConfig:
    props = {
        "zookeeper.connect": zk_connect, "group.id": GROUP, "consumer.id": consumer_id,
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200, "rebalance.backoff.ms": 200,
        "refresh.leader.backoff.ms": 100, "auto.commit.interval.ms": 300,
    }
    if auth is not None:
        props["zookeeper.auth"] = auth
    return ConsumerConfig(props)


@pytest.fixture
def alice_zk(zk_chroot):
    """Alice's own session: removes the group (only she may) before the chroot fixture removes the rest."""
    client = open_client(zk_chroot, auth=parse_auth(ALICE))
    yield client
    client.delete(f"/consumers/{GROUP}", recursive=True)
    close_client(client)


def acl_of(zk, path: str) -> set[tuple[str, str, int]]:
    return {(e.id.scheme, e.id.id, e.perms) for e in zk.get_acls(path)[0]}


def test_another_identity_cannot_touch_the_group_and_tools_still_read_it(
        zk, kafka_zk, alice_zk, bootstrap_servers, topic_name, capsys):
    create_topic(bootstrap_servers, topic_name, 1)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/0/state"))
    produce(bootstrap_servers, topic_name, [b"before"])
    alice = parse_auth(ALICE).identity
    assert alice is not None
    mallory = open_client(kafka_zk, auth=parse_auth(MALLORY))
    with capture_logs() as events, create_connector(config(kafka_zk, "c1")) as consumer:
        stream = consumer.create_message_streams({topic_name: 1})[topic_name][0]
        assert [m.message for m in take(stream, 1)] == [b"before"]
        consumer.commit_offsets()
        registration = f"/consumers/{GROUP}/ids/{GROUP}_c1"
        owner = f"/consumers/{GROUP}/owners/{topic_name}/0"
        offset = f"/consumers/{GROUP}/offsets/{topic_name}/0"
        secured = {("digest", alice.id, Permissions.ALL), ("world", "anyone", Permissions.READ)}
        for path in (f"/consumers/{GROUP}", f"/consumers/{GROUP}/ids", f"/consumers/{GROUP}/owners",
                     f"/consumers/{GROUP}/offsets/{topic_name}",
                     registration, owner, offset):
            assert acl_of(alice_zk, path) == secured, path  # others read the digest as alice:x (ZooKeeper 3.8)
        assert acl_of(zk, "/consumers") == {("world", "anyone", Permissions.ALL)}  # every group's parent

        # Another identity (and no identity) can neither delete nor overwrite nor squat.
        for intruder in (mallory, zk):
            for path in (registration, owner, offset):
                with pytest.raises(NoAuthError):
                    intruder.delete(path)
                with pytest.raises(NoAuthError):
                    intruder.set(path, b"intruder")
            with pytest.raises(NoAuthError):
                intruder.create(f"/consumers/{GROUP}/ids/{GROUP}_intruder", b"{}", ephemeral=True)
        assert zk.get(owner)[0] == f"{GROUP}_c1-0".encode()

        # The member carries on: it still owns and delivers.
        produce(bootstrap_servers, topic_name, [b"after"])
        assert [m.message for m in take(stream, 1)] == [b"after"]
        consumer.commit_offsets()
        assert zk.get(offset)[0] == b"2"

        # A monitoring tool without credentials reads the group.
        assert main(["groups", "describe", "--group", GROUP, "--zookeeper", kafka_zk, "--json"]) == 0
        described = json.loads(capsys.readouterr().out)
        text = json.dumps(described)
        assert f"{GROUP}_c1-0" in text and topic_name in text
    close_client(mallory)
    assert "alice-secret-1" not in repr(events)


def test_wrong_credentials_and_unknown_schemes_fail_at_construction(kafka_zk, alice_zk, bootstrap_servers,
                                                                     topic_name, capsys):
    create_topic(bootstrap_servers, topic_name, 1)
    with create_connector(config(kafka_zk, "c1")) as consumer:
        consumer.create_message_streams({topic_name: 1})
    with capture_logs() as events:
        for auth in ("digest:alice:wrong-password-9", None):
            with pytest.raises(AuthenticationError) as refused:
                create_connector(config(kafka_zk, "c2", auth=auth))
            assert "may not write group secured" in str(refused.value)
            assert "wrong-password-9" not in str(refused.value)
        with pytest.raises(AuthenticationError, match="'nosuchscheme'") as unknown:
            create_connector(config(kafka_zk, "c3", auth="nosuchscheme:top-secret-7"))
        assert "top-secret-7" not in str(unknown.value)
    assert "wrong-password-9" not in repr(events) and "top-secret-7" not in repr(events)

    # The command line: one line, no traceback, no secret; the right credentials from the environment work.
    status = main(["groups", "describe", "--group", GROUP, "--zookeeper", kafka_zk,
                   "--zookeeper-auth", "nosuchscheme:top-secret-7"])
    err = capsys.readouterr().err
    assert status != 0 and "top-secret-7" not in err and "Traceback" not in err and "nosuchscheme" in err


def test_offsets_import_writes_with_the_groups_identity(kafka_zk, alice_zk, bootstrap_servers, topic_name,
                                                        tmp_path, capsys, monkeypatch):
    create_topic(bootstrap_servers, topic_name, 1)
    wait_for(lambda: alice_zk.exists(f"/brokers/topics/{topic_name}"))  # import checks the topic in ZooKeeper
    with create_connector(config(kafka_zk, "c1")) as consumer:
        consumer.create_message_streams({topic_name: 1})
    offsets = tmp_path / "offsets.txt"
    offsets.write_text(f"/consumers/{GROUP}/offsets/{topic_name}/0:5\n")
    refused = main(["offsets", "import", "--input", str(offsets), "--zookeeper", kafka_zk])
    assert refused != 0 and "NoAuth" in capsys.readouterr().err
    monkeypatch.setenv("ZK_AUTH", ALICE)
    assert main(["offsets", "import", "--input", str(offsets), "--zookeeper", kafka_zk]) == 0
    assert alice_zk.get(f"/consumers/{GROUP}/offsets/{topic_name}/0")[0] == b"5"

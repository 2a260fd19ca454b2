"""SASL (DIGEST-MD5) to ZooKeeper, against the Debian ZooKeeper 3.8 server set up for it: a JAAS ``Server`` section
listing the users (``-Djava.security.auth.login.config``) and ``authProvider.1`` set to the SASL provider. With
``zookeeper.auth=sasl:user:password`` a member registers and claims under the identity ``sasl:user``, which alone may
change what it created while everyone still reads it; a wrong password is refused at start, in one line, without the
secret. The server here is started by the test (a LocalZooKeeper with those two additions): the embedded launcher
has no SASL option."""

from __future__ import annotations

import pytest
from kazoo.exceptions import NoAuthError

from zkconsumer import ConsumerConfig, create_connector
from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.errors import AuthenticationError, UsageError
from zkconsumer.security import parse_auth
from zkconsumer.zk.client import close_client, open_client

pytestmark = pytest.mark.servers
# kazoo's SASL needs pure-sasl, which the project's dependencies must list (until then this module is skipped)
pytest.importorskip("puresasl")

ALICE = "sasl:alice:alice-sasl-secret"
BOB = "sasl:bob:bob-sasl-secret"
GROUP = "sasl-group"


class SaslZooKeeper(LocalZooKeeper):
    """The local server, with DIGEST-MD5 users alice and bob."""

    def prepare(self) -> None:
        super().prepare()
        users = "\n".join(f'  user_{a.split(":")[1]}="{a.split(":")[2]}"' for a in (ALICE, BOB))
        self.jaas_path.write_text(
            f"Server {{\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n{users};\n}};\n")
        with self.config_path.open("a") as cfg:
            cfg.write("authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n")

    @property
    def jaas_path(self):
        return self.workdir / "jaas.conf"

    def argv(self) -> list[str]:
        java, *rest = super().argv()
        return [java, f"-Djava.security.auth.login.config={self.jaas_path}", *rest]


@pytest.fixture(scope="module")
def sasl_zk(tmp_path_factory):
    server = SaslZooKeeper(tmp_path_factory.mktemp("sasl-zookeeper"))
    server.start()
    yield server.connect
    server.stop()


def config(connect: str, consumer_id: str, auth: str) -> ConsumerConfig:
    return ConsumerConfig({"zookeeper.connect": connect, "group.id": GROUP, "consumer.id": consumer_id,
                           "zookeeper.auth": auth, "consumer.timeout.ms": 200, "rebalance.backoff.ms": 200})


def test_a_member_authenticated_with_sasl_owns_its_znodes_and_everyone_reads_them(sasl_zk):
    registration = f"/consumers/{GROUP}/ids/{GROUP}_c1"
    anonymous = open_client(sasl_zk)
    bob = open_client(sasl_zk, auth=parse_auth(BOB))
    try:
        with create_connector(config(sasl_zk, "c1", ALICE)) as consumer:
            # No broker in this ZooKeeper: the member registers and its rebalance completes owning nothing.
            consumer.create_message_streams({"some-topic": 1})
            data, _ = anonymous.get(registration)
            assert b'"pattern":"static"' in data
            acl = {(e.id.scheme, e.id.id, e.perms) for e in anonymous.get_acls(registration)[0]}
            assert acl == {("sasl", "alice", 31), ("world", "anyone", 1)}
            for client in (anonymous, bob):
                with pytest.raises(NoAuthError):
                    client.set(registration, b"{}")
                with pytest.raises(NoAuthError):
                    client.delete(registration)
            assert anonymous.get(registration)[0] == data
        assert not anonymous.exists(registration)  # left cleanly, by its own identity
    finally:
        close_client(bob)
        alice = open_client(sasl_zk, auth=parse_auth(ALICE))
        alice.delete(f"/consumers/{GROUP}", recursive=True)
        close_client(alice)
        close_client(anonymous)


def test_a_wrong_sasl_password_is_refused_at_start_without_the_secret(sasl_zk):
    with pytest.raises(AuthenticationError) as refused:
        create_connector(config(sasl_zk, "c2", "sasl:alice:not-the-password"))
    message = str(refused.value)
    assert "refused the credentials" in message and "sasl:alice:***" in message
    assert "not-the-password" not in message and "\n" not in message
    assert "not-the-password" not in repr(parse_auth("sasl:alice:not-the-password"))


def test_sasl_credentials_other_than_user_and_password_are_refused_before_connecting(sasl_zk):
    with pytest.raises(UsageError, match=r"SASL credentials are user:password \(DIGEST-MD5\)"):
        open_client(sasl_zk, auth=parse_auth("sasl:zookeeper/host@REALM"))


def test_the_tools_take_sasl_credentials_from_the_command_line_or_the_environment(sasl_zk, tmp_path, capsys,
                                                                                   monkeypatch):
    from zkconsumer.cli import main

    offsets = tmp_path / "offsets.txt"
    offsets.write_text(f"/consumers/{GROUP}/offsets/some-topic/0:5\n")
    wrong = main(["offsets", "import", "--input", str(offsets), "--zookeeper", sasl_zk,
                  "--zookeeper-auth", "sasl:alice:not-the-password"])
    err = capsys.readouterr().err
    assert wrong != 0 and "refused the credentials" in err, err
    assert "not-the-password" not in err and "Traceback" not in err
    monkeypatch.setenv("ZK_AUTH", ALICE)
    anonymous = open_client(sasl_zk)
    try:
        assert main(["offsets", "import", "--input", str(offsets), "--zookeeper", sasl_zk]) == 0
        path = f"/consumers/{GROUP}/offsets/some-topic/0"
        assert anonymous.get(path)[0] == b"5"
        acl = {(e.id.scheme, e.id.id, e.perms) for e in anonymous.get_acls(path)[0]}
        assert acl == {("sasl", "alice", 31), ("world", "anyone", 1)}  # written as the group's identity
        with pytest.raises(NoAuthError):
            anonymous.set(path, b"0")
    finally:
        close_client(anonymous)
        alice = open_client(sasl_zk, auth=parse_auth(ALICE))
        alice.delete(f"/consumers/{GROUP}", recursive=True)
        close_client(alice)


def test_no_password_in_anything_written_with_the_root_logger_at_debug(sasl_zk, capfd, tmp_path):
    """An application's first step when debugging: the root logger at DEBUG (here below it, kazoo's BLATHER too).
    A digest session, a SASL session and a connector with each, then the command line with the credentials in the
    environment: no password in any record, any handler's output, stdout or stderr."""
    import io
    import logging

    from zkconsumer.cli import main

    digest = "digest:carol:carol-digest-secret"
    passwords = ("carol-digest-secret", ALICE.split(":")[2])
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            self.format(record)

    root = logging.getLogger()
    saved = root.level
    stderr = logging.StreamHandler()  # bound to the captured stderr of this test
    keep = Keep()
    for h in (handler, stderr, keep):
        root.addHandler(h)
    root.setLevel(1)
    try:
        for auth in (digest, ALICE):
            client = open_client(sasl_zk, auth=parse_auth(auth))
            try:
                client.ensure_path("/debug-log-check")
            finally:
                close_client(client)
            with create_connector(ConsumerConfig({"zookeeper.connect": sasl_zk, "group.id": f"debug-{auth[:4]}",
                                                  "zookeeper.auth": auth})) as connector:
                connector.create_message_streams({"some-topic": 1})
        offsets = tmp_path / "offsets.txt"
        offsets.write_text(f"/consumers/{GROUP}/offsets/some-topic/0:5\n")
        assert main(["--log-level", "debug", "offsets", "import", "--input", str(offsets), "--zookeeper", sasl_zk,
                     "--zookeeper-auth", ALICE]) == 0
    finally:
        for h in (handler, stderr, keep):
            root.removeHandler(h)
        root.setLevel(saved)
    out, err = capfd.readouterr()
    sent = [r.getMessage() for r in records if "Sending request" in r.msg]
    assert any("Auth(" in m for m in sent) and any("SASL(" in m for m in sent), sent  # the packets were logged
    everything = "\n".join([written.getvalue(), out, err, *(r.getMessage() for r in records),
                            *(repr(r.__dict__) for r in records)])
    assert "Auth(auth_type=0, scheme='digest', auth='carol:***')" in written.getvalue()  # logged, redacted
    for password in passwords:
        assert password not in everything

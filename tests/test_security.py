"""zookeeper.auth and zookeeper.acl, pure: parsing, the defaults, what counts as a missing permission, the ACL's
bytes in the multi-op budget, and that a secret shows up nowhere (repr, str, errors, events)."""

from __future__ import annotations

import pytest
from kazoo.protocol import serialization as wire
from kazoo.security import ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, Id, Permissions
from structlog.testing import capture_logs

from zkconsumer.config import ConsumerConfig, InvalidConfigError
from zkconsumer.security import (
    default_acl,
    grants,
    missing_permissions,
    parse_acl,
    parse_auth,
)
from zkconsumer.zk.batched_transaction import Create, op_bytes

SECRET = "s3cr3t-Pa55"


def base(**extra) -> dict:
    return {"group.id": "g", "zookeeper.connect": "127.0.0.1:2181", **extra}


def test_digest_credentials_give_the_identity_zookeeper_computes():
    auth = parse_auth(f"digest:alice:{SECRET}")
    assert auth.user == "alice" and auth.scheme == "digest"
    # kazoo's make_digest_acl_credential computes the same id the server stores in ACLs
    from kazoo.security import make_digest_acl_credential
    assert auth.identity == Id("digest", make_digest_acl_credential("alice", SECRET))
    assert auth.auth_data() == [("digest", f"alice:{SECRET}")]
    assert parse_auth("sasl:anything").identity is None


def test_a_secret_is_in_no_repr_str_or_error():
    auth = parse_auth(f"digest:alice:{SECRET}")
    assert SECRET not in repr(auth) and SECRET not in str(auth) and "alice" in repr(auth)
    with capture_logs() as events:
        config = ConsumerConfig(base(**{"zookeeper.auth": f" digest:alice:{SECRET} ", "no.such.key": "x"}))
    assert SECRET not in repr(config) and SECRET not in str(config) and SECRET not in repr(events)
    assert config.zookeeper_auth.credentials == f"alice:{SECRET}"
    for bad in (f"digest:{SECRET}", "digest:", SECRET, 17):
        with pytest.raises(InvalidConfigError, match="^config zookeeper.auth") as refused:
            ConsumerConfig(base(**{"zookeeper.auth": bad}))
        assert SECRET not in str(refused.value) and "17" not in str(refused.value)


@pytest.mark.parametrize(("text", "problem"), [
    ("", "empty"), ("world:anyone", "scheme:id:perms"), ("world:anyone:rx", "cdrwa"),
    ("digest:alice:cdrwa", "user:base64-sha1"), ("world::r", "needs an id"), (",", "scheme:id:perms"),
])
def test_a_bad_acl_is_refused_naming_the_entry(text, problem):
    with pytest.raises(InvalidConfigError, match="^config zookeeper.acl") as refused:
        ConsumerConfig(base(**{"zookeeper.auth": "digest:a:b", "zookeeper.acl": text}))
    assert problem in str(refused.value)


def test_acl_notation_and_defaults():
    acl = parse_acl("auth::cdrwa, world:anyone:r,ip:10.0.0.0/8:rw,digest:bob:abc=:cd")
    assert acl == (ACL(Permissions.ALL, Id("auth", "")), ACL(Permissions.READ, Id("world", "anyone")),
                   ACL(Permissions.READ | Permissions.WRITE, Id("ip", "10.0.0.0/8")),
                   ACL(Permissions.CREATE | Permissions.DELETE, Id("digest", "bob:abc=")))
    assert parse_acl("open") == tuple(OPEN_ACL_UNSAFE)
    auth = parse_auth("digest:a:b")
    assert default_acl(None, None) is None  # Kafka's: open
    assert default_acl(auth, None) == tuple(CREATOR_ALL_ACL) + tuple(READ_ACL_UNSAFE)
    assert default_acl(auth, "world:anyone:r") == (ACL(Permissions.READ, Id("world", "anyone")),)
    with pytest.raises(InvalidConfigError, match="needs zookeeper.auth"):
        ConsumerConfig(base(**{"zookeeper.acl": "auth::cdrwa"}))


def test_missing_permissions_are_those_no_entry_can_grant():
    me, other = Id("digest", "alice:AAA="), Id("digest", "bob:BBB=")
    secured = [ACL(Permissions.ALL, other), ACL(Permissions.READ, Id("world", "anyone"))]
    mine = [ACL(Permissions.ALL, me), ACL(Permissions.READ, Id("world", "anyone"))]
    by_ip = [ACL(Permissions.ALL, Id("ip", "127.0.0.1"))]
    assert grants(secured, me, Permissions.CREATE) is False
    assert grants(mine, me, Permissions.CREATE) is True
    assert grants(by_ip, me, Permissions.CREATE) is None  # cannot tell here: not refused
    assert grants(OPEN_ACL_UNSAFE, None, Permissions.DELETE) is True
    needed = {"/a": Permissions.CREATE | Permissions.DELETE, "/b": Permissions.CREATE, "/c": Permissions.CREATE,
              "/absent": Permissions.CREATE}
    acls = {"/a": secured, "/b": mine, "/c": by_ip}
    assert missing_permissions(acls, needed, me) == ["/a: create", "/a: delete"]
    assert missing_permissions(acls, needed, None) == ["/a: create", "/a: delete", "/b: create"]


def test_the_secure_default_acl_is_counted_in_the_multi_op_budget():
    acl = default_acl(parse_auth("digest:a:b"), None)
    op = Create("/consumers/g/owners/t/7", b"g_c-0", ephemeral=True)
    on_wire = wire.Transaction([wire.Create("/chroot" + op.path, op.data, list(acl or ()), 1)]).serialize()
    assert op_bytes(op, "/chroot", acl) == len(on_wire) - 9
    assert op_bytes(op, "/chroot", acl) > op_bytes(op, "/chroot", None)

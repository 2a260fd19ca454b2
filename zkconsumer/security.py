"""ZooKeeper credentials and ACLs: ``zookeeper.auth`` and ``zookeeper.acl``, parsed, and checked before we write.

Pure: strings in, values out; the I/O (adding the auth to a session, reading ACLs) is the caller's.

Why a check at start: ZooKeeper's digest scheme accepts any password, it only hashes it into an identity
(``digest:alice:<sha1>``); a wrong password shows up later as ``NoAuth`` on the first write, in the middle of a
rebalance. :func:`missing_permissions` compares the ACLs of the group's directories with the identity we hold, so
the connector can refuse at construction, naming the znode and the permission.

Secrets: :class:`ZkAuth` never shows its credentials (``repr``, ``str``, errors); only the scheme and, for
``digest`` and ``sasl``, the user name.

SASL: ``sasl:user:password`` authenticates with DIGEST-MD5 when the session is set up (kazoo's ``sasl_options``,
through the ``pure-sasl`` package), against a server whose JAAS ``Server`` section lists the user and whose
``authProvider.1`` is ``org.apache.zookeeper.server.auth.SASLAuthenticationProvider``; the identity is then
``sasl:user``. Unlike digest, the server checks the password: a wrong one fails the session's first request.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # kazoo is imported when an ACL is built: the pure commands (assign, compare) never load it
    from kazoo.security import ACL, Id


class Permissions:
    """ZooKeeper's permission bits (``ZooDefs.Perms``), as kazoo's ``Permissions``."""

    READ, WRITE, CREATE, DELETE, ADMIN = 1, 2, 4, 8, 16
    ALL = 31


#: what ``zookeeper.acl`` defaults to once credentials are set: the creator may do anything, everyone may read
#: (Burrow, kafka-manager, ``groups describe`` keep working without credentials); Kafka's secure default too
DEFAULT_SECURE_ACL = "auth::cdrwa,world:anyone:r"


def shared_acl() -> list[Any]:
    """The ACL of parents every group shares (``/consumers``) and of the brokers' paths when we happen to create
    them: open, so that other groups and the brokers can still add their children (Kafka 0.10 left them open)."""
    from kazoo.security import OPEN_ACL_UNSAFE

    return list(OPEN_ACL_UNSAFE)


_PERMS = {"c": Permissions.CREATE, "d": Permissions.DELETE, "r": Permissions.READ, "w": Permissions.WRITE,
          "a": Permissions.ADMIN}
PERMISSION_NAMES = {Permissions.CREATE: "create", Permissions.DELETE: "delete", Permissions.READ: "read",
                    Permissions.WRITE: "write", Permissions.ADMIN: "admin"}


#: schemes whose credentials are ``user:password`` (for sasl, DIGEST-MD5's; other SASL mechanisms, such as Kerberos,
#: are not supported: :meth:`ZkAuth.sasl_options` is None for them and the client refuses them)
USER_PASSWORD_SCHEMES = ("digest", "sasl")


@dataclass(frozen=True)
class ZkAuth:
    """``scheme:credentials`` as given; ``credentials`` never appears in ``repr``."""

    scheme: str
    credentials: str = field(repr=False)

    @property
    def user(self) -> str | None:
        """The digest or SASL user name (not secret: it is in every ACL), else None."""
        user, colon, _ = self.credentials.partition(":")
        return user if self.scheme in USER_PASSWORD_SCHEMES and colon else None

    @property
    def identity(self) -> Id | None:
        """The id ZooKeeper gives this session for the credentials, when we can compute it (digest, sasl)."""
        if self.scheme == "sasl":
            from kazoo.security import Id

            return Id("sasl", self.user) if self.user is not None else None
        if self.scheme != "digest":
            return None
        user, _, password = self.credentials.partition(":")
        digest = base64.b64encode(hashlib.sha1(f"{user}:{password}".encode()).digest()).decode()
        from kazoo.security import Id

        return Id("digest", f"{user}:{digest}")

    def describe(self) -> str:
        """What may be shown: ``digest:alice:***``."""
        return f"{self.scheme}:{self.user}:***" if self.user is not None else f"{self.scheme}:***"

    def __repr__(self) -> str:
        return f"ZkAuth({self.describe()!r})"

    def __str__(self) -> str:
        return self.describe()

    def auth_data(self) -> list[tuple[str, str]]:
        """For ``KazooClient(auth_data=...)``: empty for SASL, which is :meth:`sasl_options` instead."""
        return [] if self.scheme == "sasl" else [(self.scheme, self.credentials)]

    def sasl_options(self) -> dict[str, str] | None:
        """For ``KazooClient(sasl_options=...)``: DIGEST-MD5 with the user and password, for ``sasl`` only."""
        if self.scheme != "sasl" or self.user is None:
            return None
        user, _, password = self.credentials.partition(":")
        return {"mechanism": "DIGEST-MD5", "username": user, "password": password}


def parse_auth(text: str) -> ZkAuth:
    """``scheme:credentials``; ValueError says what is wrong without repeating the value."""
    scheme, colon, credentials = text.strip().partition(":")
    if not colon or not scheme or not credentials:
        raise ValueError("expected scheme:credentials, for example digest:user:password")
    if not scheme.replace("-", "").replace("_", "").isalnum():
        raise ValueError("the scheme must be a word (digest, ...)")
    if scheme == "digest":
        user, colon, password = credentials.partition(":")
        if not colon or not user or not password:
            raise ValueError("digest credentials are user:password")
    return ZkAuth(scheme, credentials)


def parse_acl(text: str) -> tuple[ACL, ...]:
    """ZooKeeper CLI notation, comma separated: ``scheme:id:perms`` (``world:anyone:r``,
    ``digest:alice:<base64 sha1>:cdrwa``, ``ip:10.0.0.0/8:r``, ``auth::cdrwa`` for the creator's identity), or
    ``open`` for world:anyone:cdrwa. ValueError names the bad entry (ACLs hold no secrets)."""
    from kazoo.security import ACL, OPEN_ACL_UNSAFE, Id

    text = text.strip()
    if text == "open":
        return tuple(OPEN_ACL_UNSAFE)
    if not text:
        raise ValueError("empty: give entries such as auth::cdrwa,world:anyone:r, or open")
    entries: list[ACL] = []
    for entry in (e.strip() for e in text.split(",")):
        scheme, _, rest = entry.partition(":")
        ident, colon, perms = rest.rpartition(":")
        if not scheme or not colon:
            raise ValueError(f"entry {entry!r} is not scheme:id:perms")
        if not perms or any(p not in _PERMS for p in perms):
            raise ValueError(f"entry {entry!r}: permissions are letters of cdrwa")
        if scheme in ("world", "digest", "ip", "sasl", "x509") and not ident:
            raise ValueError(f"entry {entry!r}: scheme {scheme} needs an id")
        if scheme == "digest" and ":" not in ident:
            raise ValueError(f"entry {entry!r}: a digest id is user:base64-sha1 (as `zkconsumer` or zkCli prints it)")
        mask = 0
        for p in perms:
            mask |= _PERMS[p]
        entries.append(ACL(mask, Id(scheme, ident)))
    return tuple(entries)


def default_acl(auth: ZkAuth | None, acl: str | None) -> tuple[ACL, ...] | None:
    """The ACL for everything we create: ``zookeeper.acl`` if set, else with credentials the creator writes and
    everyone reads, else None (kazoo's default, open, as Kafka 0.10 wrote them)."""
    if acl:
        return parse_acl(acl)
    if auth is not None:
        return parse_acl(DEFAULT_SECURE_ACL)
    return None


def needs_auth(acl: Sequence[ACL] | None) -> bool:
    """Whether creating with ``acl`` needs an authenticated session (``auth::`` entries do)."""
    return any(entry.id.scheme == "auth" for entry in acl or ())


def grants(acl: Iterable[ACL], identity: Id | None, perm: int) -> bool | None:
    """True when an entry of ``acl`` surely grants ``perm`` to us (world:anyone, or our digest identity), None when
    only an entry we cannot evaluate here might (ip, sasl, x509, another scheme's auth), False when none does."""
    maybe = False
    for entry in acl:
        if not entry.perms & perm:
            continue
        if entry.id.scheme == "world" and entry.id.id == "anyone":
            return True
        if identity is not None and entry.id.scheme == identity.scheme and entry.id.id == identity.id:
            return True
        if entry.id.scheme not in ("world", "digest"):
            maybe = True
    return None if maybe else False


def missing_permissions(acls: Mapping[str, Sequence[ACL]], needed: Mapping[str, int],
                        identity: Id | None) -> list[str]:
    """``path: permission`` for each permission ``needed`` at an existing path (``acls``) that no entry grants us;
    paths absent from ``acls`` do not exist yet (we will create them with our own ACL)."""
    problems: list[str] = []
    for path, mask in needed.items():
        if path not in acls:
            continue
        for perm, name in PERMISSION_NAMES.items():
            if mask & perm and grants(acls[path], identity, perm) is False:
                problems.append(f"{path}: {name}")
    return problems

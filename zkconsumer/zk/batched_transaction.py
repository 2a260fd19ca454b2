"""ZooKeeper multi-ops cut into batches that each fit under the server's request size limit.

A ZooKeeper server refuses any request larger than its ``jute.maxbuffer`` (0xfffff bytes, just under 1 MiB, unless
the operator raised it): it does not answer with an error, it closes the connection, and the client sees
``ConnectionLoss``. A single multi-op claiming the owner znodes of 10,000 partitions is about 1.3 MB, so a group of
that size could never start in one request (each retry would drop the connection again). Kafka, writing one znode
per request, never met this limit.

So writes of many znodes are planned here as batches whose serialized size stays under a byte budget
(``zookeeper.multi.max.bytes``). The size of each operation is computed from jute's encoding, exactly as kazoo
puts it on the wire (the chroot included, since kazoo prefixes every path with it), plus a per-request allowance
for the headers; the default budget is half the server's default limit, because what the server logs and, in an
ensemble, sends to its followers for the same request is somewhat larger than the request itself (transaction
headers, the ACLs written out per znode), and because some servers run with ``jute.maxbuffer`` lowered.

Batches keep no atomicity across them: each is one transaction. Callers that need an attempt to be all or nothing
(the owner claim) undo the batches already applied when a later one fails (:mod:`zkconsumer.group.owner_claims`).

The planning is pure (:func:`plan_batches`, :func:`op_bytes`); :func:`commit_async` sends one batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.protocol import serialization as records_
from kazoo.protocol.paths import _prefix_root
from kazoo.security import OPEN_ACL_UNSAFE

from zkconsumer.config import DEFAULT_ZOOKEEPER_MULTI_MAX_BYTES, InvalidConfigError

#: The config key that sets the budget, named in every error about it.
MAX_BYTES_KEY = "zookeeper.multi.max.bytes"
#: ZooKeeper's default ``jute.maxbuffer``: the largest request a default server accepts.
JUTE_MAXBUFFER = 0xFFFFF
#: The default budget: half the default limit (see the module's docstring for why the margin).
DEFAULT_MULTI_MAX_BYTES = DEFAULT_ZOOKEEPER_MULTI_MAX_BYTES
#: Per request, outside the operations: the length prefix (4), the request header (xid, type: 8) and the
#: multi-op's closing header (type, done, err: 9), rounded up generously.
REQUEST_OVERHEAD = 64
#: A multi-op's header before each operation: type (4), done (1), err (4).
_OP_HEADER = 9
_INT = 4


@dataclass(frozen=True, slots=True)
class Create:
    """Create a znode; without ``data``, a parent directory with null data, as Kafka's parents hold
    (:mod:`zkconsumer.zk.persistent`)."""

    path: str
    data: bytes | None = None
    ephemeral: bool = False


@dataclass(frozen=True, slots=True)
class SetData:
    path: str
    data: bytes
    version: int = -1


@dataclass(frozen=True, slots=True)
class Delete:
    path: str
    version: int = -1


Op = Create | SetData | Delete


class MultiOpTooLargeError(InvalidConfigError):
    """One operation alone is larger than the budget: no batching can send it."""

    def __init__(self, op: Op, size: int, max_bytes: int) -> None:
        self.op, self.size, self.max_bytes = op, size, max_bytes
        super().__init__(
            f"config {MAX_BYTES_KEY}={max_bytes}: too small for one ZooKeeper operation ({type(op).__name__} "
            f"{op.path}, {size + REQUEST_OVERHEAD} bytes with the request's headers); raise it (default "
            f"{DEFAULT_MULTI_MAX_BYTES}, at most the server's jute.maxbuffer) or set 0 for one request per znode"
        )


def _string(text: str) -> int:
    return _INT + len(text.encode("utf-8"))


def acl_bytes(acl: Sequence[Any] | None = None) -> int:
    """Bytes of an ACL list as jute writes it (kazoo's default, world:anyone, when ``None``)."""
    entries = acl or OPEN_ACL_UNSAFE
    return _INT + sum(_INT + _string(entry.id.scheme) + _string(entry.id.id) for entry in entries)


def op_bytes(op: Op, chroot: str = "", acl: Sequence[Any] | None = None) -> int:
    """The bytes ``op`` adds to a multi-op request: its header and its record, path with ``chroot``."""
    return _op_bytes(op, chroot, acl_bytes(acl))


def _op_bytes(op: Op, chroot: str, acl_size: int) -> int:
    """:func:`op_bytes` with the ACL's size given (the same for every create of a batch)."""
    path = _string(chroot + op.path if chroot else op.path)
    if isinstance(op, Create):  # null data is its length alone (-1)
        return _OP_HEADER + path + _INT + len(op.data or b"") + acl_size + _INT
    if isinstance(op, SetData):
        return _OP_HEADER + path + _INT + len(op.data) + _INT
    return _OP_HEADER + path + _INT


def chroot_of(connect: str) -> str:
    """The chroot of a connect string (``host:port,host:port/chroot``), which kazoo puts in front of every path."""
    _, slash, chroot = connect.partition("/")
    return slash + chroot if chroot else ""


def check_budget(max_bytes: int, largest: Op, chroot: str = "", acl: Sequence[Any] | None = None) -> None:
    """Fail (naming the key) unless ``largest``, the largest operation a caller can produce, fits the budget;
    ``0`` means no multi-ops at all and always passes."""
    size = op_bytes(largest, chroot, acl)
    if max_bytes and size + REQUEST_OVERHEAD > max_bytes:
        raise MultiOpTooLargeError(largest, size, max_bytes)


def plan_batches(ops: Iterable[Op], max_bytes: int, chroot: str = "",
                 acl: Sequence[Any] | None = None) -> list[list[Op]]:
    """``ops`` in order, cut into the fewest consecutive batches of at most ``max_bytes`` each (headers included);
    ``max_bytes`` 0 makes each operation its own batch (one request per znode, as Kafka wrote them)."""
    batches: list[list[Op]] = []
    current: list[Op] = []
    used = REQUEST_OVERHEAD
    acl_size = acl_bytes(acl)
    for op in ops:
        if max_bytes == 0:
            batches.append([op])
            continue
        size = _op_bytes(op, chroot, acl_size)
        if size + REQUEST_OVERHEAD > max_bytes:
            raise MultiOpTooLargeError(op, size, max_bytes)
        if current and used + size > max_bytes:
            batches.append(current)
            current, used = [], REQUEST_OVERHEAD
        current.append(op)
        used += size
    if current:
        batches.append(current)
    return batches


def plan_for(zk: KazooClient, ops: Iterable[Op], max_bytes: int) -> list[list[Op]]:
    """:func:`plan_batches` for what ``zk`` sends: its chroot and its default ACL."""
    return plan_batches(ops, max_bytes, zk.chroot or "", zk.default_acl)


def commit_async(zk: KazooClient, batch: Sequence[Op]) -> Any:
    """Send ``batch`` as one multi-op; the kazoo async result gives one entry per operation (created path,
    ``ZnodeStat``, ``True``, or the exception; ``RolledBackError`` for those undone by another's failure).

    The transaction's records are the ones kazoo's ``create``, ``set_data`` and ``delete`` would queue, made here:
    kazoo checks the types of every argument and normalises every path twice (some 14 us an operation, 140 ms for
    the claims of 10,000 partitions, more than the request's serialization), where a path built by
    :mod:`zkconsumer.zk.paths` is normal already and only needs the chroot in front (:func:`_rooted`). A Create's
    ``None`` data goes out as ZooKeeper's null data (kazoo's ``create`` takes bytes only)."""
    txn = zk.transaction()
    txn.operations.extend(records(zk, batch))
    return txn.commit_async()


def records(zk: KazooClient, batch: Sequence[Op]) -> list[Any]:
    """The records of :func:`commit_async`'s transaction, in the batch's order."""
    root = zk.chroot or ""
    acl = zk.default_acl or OPEN_ACL_UNSAFE
    made: list[Any] = []
    for op in batch:
        path = _rooted(root, op.path)
        if isinstance(op, Create):
            made.append(records_.Create(path=path, data=op.data, acl=acl, flags=1 if op.ephemeral else 0))
        elif isinstance(op, SetData):
            made.append(records_.SetData(path=path, data=op.data, version=op.version))
        else:
            made.append(records_.Delete(path=path, version=op.version))
    return made


def _rooted(root: str, path: str) -> str:
    """``path`` as kazoo sends it under the chroot ``root`` (kazoo keeps it normalised, ``""`` for none): the two
    put together when ``path`` is absolute and normal, else kazoo's own normalisation."""
    if path.startswith("/") and path != "/" and not path.endswith("/") and "//" not in path and "/." not in path:
        return root + path
    return _prefix_root(root, path)


def failed(results: Sequence[Any]) -> bool:
    """Whether a multi-op's results say it was not applied."""
    return any(isinstance(r, Exception) for r in results)

"""Multi-ops cut under a byte budget: the size of each operation is what kazoo puts on the wire, every batch fits,
and a budget too small for one operation is refused naming the key. Pure: no server."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient
from kazoo.protocol import serialization as wire
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from zkconsumer.config import ConsumerConfig, InvalidConfigError
from zkconsumer.zk.batched_transaction import (
    DEFAULT_MULTI_MAX_BYTES,
    JUTE_MAXBUFFER,
    MAX_BYTES_KEY,
    REQUEST_OVERHEAD,
    Create,
    Delete,
    MultiOpTooLargeError,
    Op,
    SetData,
    check_budget,
    chroot_of,
    op_bytes,
    plan_batches,
    records,
)

DIGEST_ACL = [make_digest_acl("operator", "secret", all=True)]


def kazoo_record(op: Op, chroot: str = "", acl=None) -> wire.Create | wire.SetData | wire.Delete:
    """The record kazoo's TransactionRequest builds for ``op`` (its path prefixed with the chroot)."""
    path = chroot + op.path
    if isinstance(op, Create):
        return wire.Create(path, op.data, acl or OPEN_ACL_UNSAFE, 1 if op.ephemeral else 0)
    if isinstance(op, SetData):
        return wire.SetData(path, op.data, op.version)
    return wire.Delete(path, op.version)


def request_bytes(batch: list[Op], chroot: str = "", acl=None) -> int:
    """The whole request as the server receives it: length prefix, xid and type, the multi-op's records."""
    return 4 + 8 + len(wire.Transaction([kazoo_record(op, chroot, acl) for op in batch]).serialize())


OPS = st.one_of(
    st.builds(Create, st.text(min_size=1, max_size=300).map(lambda s: "/" + s),
              st.one_of(st.none(), st.binary(max_size=600)), st.booleans()),
    st.builds(SetData, st.text(min_size=1, max_size=300).map(lambda s: "/" + s), st.binary(max_size=600),
              st.integers(-1, 2**31 - 1)),
    st.builds(Delete, st.text(min_size=1, max_size=300).map(lambda s: "/" + s), st.integers(-1, 2**31 - 1)),
)


@pytest.mark.parametrize("chroot", ["", "/zkconsumer-tests/x-1"])
@pytest.mark.parametrize("acl", [None, DIGEST_ACL])
def test_the_size_of_an_operation_is_its_size_on_the_wire(chroot, acl):
    for op in (Create("/consumers/g/owners/t/7", b"g_c-0", ephemeral=True), Create("/consumers/g/offsets/t/7", b""),
               Create("/consumers/g/offsets/t"), SetData("/consumers/g/offsets/t/7", b"12345", 3),
               Delete("/consumers/g/owners/t/ü", 0)):
        single = wire.Transaction([kazoo_record(op, chroot, acl)]).serialize()
        assert op_bytes(op, chroot, acl) == len(single) - 9  # the multi-op's closing header is per request


@pytest.mark.parametrize("chroot", ["", "/zkconsumer-tests/x-1"])
@pytest.mark.parametrize("acl", [None, DIGEST_ACL])
def test_the_records_are_the_ones_kazoo_s_own_transaction_makes(chroot, acl):
    """The records made without kazoo's checks equal, field by field, what ``create``, ``set_data`` and ``delete``
    of kazoo's TransactionRequest queue for the same operations (no server needed to build them)."""
    client = KazooClient(hosts=f"127.0.0.1:1{chroot}", default_acl=acl)
    batch: list[Op] = [Create("/consumers/g/owners/t/7", b"g_c-0", ephemeral=True), Create("/consumers/g/ids/c", b"{}"),
                       SetData("/consumers/g/offsets/t/7", b"12345", 3), Delete("/consumers/g/owners/t/0", -1),
                       Delete("/consumers/g/owners/t/\u00fc", 0)]
    theirs = client.transaction()
    for op in batch:
        if isinstance(op, Create):
            theirs.create(op.path, op.data or b"", ephemeral=op.ephemeral)
        elif isinstance(op, SetData):
            theirs.set_data(op.path, op.data, op.version)
        else:
            theirs.delete(op.path, op.version)
    assert records(client, batch) == theirs.operations


@settings(max_examples=150, deadline=None)
@given(st.lists(OPS, max_size=60), st.integers(2_000, 20_000), st.sampled_from(["", "/chroot/of/a/test"]))
def test_every_batch_fits_the_budget_and_the_order_is_kept(ops, budget, chroot):
    batches = plan_batches(ops, budget, chroot)
    assert [op for batch in batches for op in batch] == ops
    assert all(batch for batch in batches)
    for batch in batches:
        assert request_bytes(batch, chroot) <= budget
    for first, second in zip(batches, batches[1:], strict=False):
        # greedy: the next batch's first operation did not fit in the batch before it
        assert request_bytes(first + second[:1], chroot) > budget - REQUEST_OVERHEAD + 4 + 8 + 9


def test_ten_thousand_claims_fit_a_default_server_in_a_few_requests():
    """The case that could not start: 10,000 owner znodes, about 1.3 MB in one request."""
    claims = [Create(f"/consumers/group-of-ten-thousand/owners/orders/{p}",
                     b"group-of-ten-thousand_host-1700000000000-1a2b3c4d-0", ephemeral=True) for p in range(10_000)]
    assert request_bytes(claims) > JUTE_MAXBUFFER
    batches = plan_batches(claims, DEFAULT_MULTI_MAX_BYTES)
    assert len(batches) == 3
    assert max(request_bytes(batch) for batch in batches) <= DEFAULT_MULTI_MAX_BYTES < JUTE_MAXBUFFER


def test_budget_zero_is_one_request_per_znode():
    ops = [Delete(f"/a/{i}") for i in range(5)]
    assert plan_batches(ops, 0) == [[op] for op in ops]


def test_a_budget_too_small_for_one_operation_names_the_key():
    op = Create("/consumers/g/owners/t/0", b"x" * 500)
    with pytest.raises(MultiOpTooLargeError, match=rf"^config {MAX_BYTES_KEY}=300: too small for one ZooKeeper "
                                                   r"operation \(Create /consumers/g/owners/t/0, \d+ bytes"):
        plan_batches([Delete("/a"), op], 300)
    with pytest.raises(InvalidConfigError, match=MAX_BYTES_KEY):
        check_budget(300, op)
    check_budget(0, op)  # one request per znode: any size the server takes
    check_budget(REQUEST_OVERHEAD + op_bytes(op), op)


def test_the_chroot_counts():
    assert chroot_of("127.0.0.1:2181,127.0.0.2:2181/kafka/prod") == "/kafka/prod"
    assert chroot_of("127.0.0.1:2181") == ""
    op = Create("/consumers/g/owners/t/0", b"g_c-0")
    assert op_bytes(op, "/kafka/prod") == op_bytes(op) + len("/kafka/prod")


def test_the_config_key_takes_zero_and_refuses_negative_values():
    required = {"zookeeper.connect": "127.0.0.1:2181", "group.id": "g1"}
    assert ConsumerConfig(required).zookeeper_multi_max_bytes == DEFAULT_MULTI_MAX_BYTES
    assert ConsumerConfig({**required, MAX_BYTES_KEY: "0"}).zookeeper_multi_max_bytes == 0
    with pytest.raises(InvalidConfigError, match=rf"^config {MAX_BYTES_KEY}='-1': must be at least 0$"):
        ConsumerConfig({**required, MAX_BYTES_KEY: "-1"})

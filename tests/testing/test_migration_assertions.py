"""The team's own messages through a comparison, and the assertions a migration needs, on the session's servers: they
pass on a well-behaved consumer, and each fails, in one sentence naming the protocol, on the consumer it exists to
catch (an application that reorders within a key; a member that keeps fetching after its revocation)."""

from __future__ import annotations

import itertools

import pytest
from migration_apps import read_keyed

from zkconsumer.scenarios.model import Action, Member, Production, Scenario, Scene, Topic

pytestmark = [pytest.mark.migration, pytest.mark.timeout(240)]

TWO_MEMBERS = Scenario("two", "Two members", "one joins, the first leaves", Topic("orders", 2), Production(rate=20),
                       (Member("a"), Member("b")),
                       (Scene(1, "a starts", "", (Action("start", "a"),)),
                        Scene(2, "b joins", "", (Action("start", "b"),)),
                        Scene(3, "a leaves", "", (Action("stop", "a"),))))
ONE_MEMBER = Scenario("one", "One member", "one member reads", Topic("orders", 2), Production(rate=20),
                      (Member("a"),), (Scene(1, "a starts", "", (Action("start", "a"),)),))


def orders():
    """The team's messages: five orders, each a sequence of steps, with a header."""
    return ((f"order-{n % 5}", f"step-{n // 5}", {"source": "test"}) for n in itertools.count())


def test_the_team_s_messages_are_produced_to_each_protocol_and_the_assertions_pass(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="migration_apps:record_keyed", scenario=TWO_MEMBERS,
                                          protocols=["legacy-range", "cooperative-sticky", "consumer-uniform"],
                                          messages=orders())
    result.assert_nothing_lost()
    result.assert_order_per_key()
    result.assert_order_per_key(read_keyed)
    result.assert_no_double_ownership()
    result.assert_committed_equals_consumed()
    result.assert_rebalances_at_most(10)
    for name, o in result.protocols.items():
        assert o.produced > 0 and {m.key for m in o.produced_messages} == {f"order-{k}" for k in range(5)}, name
        # message n is the same under every protocol, and one order's steps stay in one partition
        assert [m.value for m in o.produced_messages[:5]] == ["step-0"] * 5, name
        assert all(len({m.partition for m in o.produced_messages if m.key == key}) == 1
                   for key in {m.key for m in o.produced_messages}), name
        assert o.committed, name
    with pytest.raises(AssertionError, match=r"^legacy-range rebalanced [0-9]+ times, more than 1$"):
        result.assert_rebalances_at_most(1)


def test_an_application_that_reorders_within_a_key_fails_assert_order_per_key(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="migration_apps:reverse_in_fives", scenario=ONE_MEMBER,
                                          protocols=["range"], messages=orders())
    result.assert_order_per_key()  # the member handed them over in order: the application reordered them
    with pytest.raises(AssertionError) as failed:
        result.assert_order_per_key(read_keyed)
    said = str(failed.value)
    assert said.startswith("range (at ") and "\n" not in said
    assert "the application processed" in said and "out of order within their key, first key 'order-" in said


def test_a_member_that_keeps_fetching_after_its_revocation_fails_assert_no_double_ownership(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="migration_apps:record_keyed", scenario=TWO_MEMBERS,
                                          protocols=["cooperative-sticky"], fetch_after_revoke_ms=3000)
    result.assert_nothing_lost()
    with pytest.raises(AssertionError) as failed:
        result.assert_no_double_ownership()
    said = str(failed.value)
    assert said.startswith("cooperative-sticky (at ") and "\n" not in said, said
    assert "held by two members at once" in said and "after its own fetching of it had ended, while " in said, said
    assert result["cooperative-sticky"].duplicates > 0  # both members delivered the partition's messages

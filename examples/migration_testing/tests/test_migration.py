import sys
from pathlib import Path

from zkconsumer.scenarios.model import Action, Member, Production, Scenario, Scene, Topic

DEPLOY = Scenario("deploy", "Deploy", "two members, one replaced", Topic("orders", 4), Production(rate=20),
                  (Member("a"), Member("b")),
                  (Scene(1, "a starts", "", (Action("start", "a"),)),
                   Scene(2, "b joins", "", (Action("start", "b"),)),
                   Scene(3, "a leaves", "", (Action("stop", "a"),))))


def processed(state: Path) -> list[str]:
    return [line.split(" ")[1] for f in state.glob("processed-*.txt") for line in f.read_text().splitlines()]


def order_keys(state: Path) -> set[str]:
    return {line.split(" ")[0] for f in state.glob("processed-*.txt") for line in f.read_text().splitlines()}


def test_orders_survive_the_move_from_zookeeper_to_cooperative_sticky(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="orders.app:handle", scenario="migration",
                                          protocols=["legacy-range", "cooperative-sticky"])
    result.assert_nothing_lost()
    result.assert_state_complete(processed)
    result.assert_duplicates_at_most(100)
    result.assert_same_state(order_keys)
    result.assert_order_per_key()               # each order's messages in the order produced
    result.assert_no_double_ownership()         # no partition held by two members at once
    result.assert_committed_equals_consumed()   # what each group committed is what it consumed


def test_a_deploy_of_two_members_loses_nothing_under_any_protocol(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="orders.app:handle", scenario=DEPLOY,
                                          protocols=["legacy-roundrobin", "range"])
    result.assert_nothing_lost()
    result.assert_state_complete(processed)
    result.assert_same_state(order_keys)


def test_our_own_consumer_loses_nothing_in_a_kip848_group(zkconsumer_migration):
    """The service's own consumer (orders/consumer.py: its commit policy, its rebalance callbacks) as the members of
    the KIP-848 group; the ZooKeeper group's members run its processing, orders.app:handle."""
    result = zkconsumer_migration.compare(app="orders.app:handle", member=[sys.executable, "-m", "orders.consumer"],
                                          scenario=DEPLOY, protocols=["legacy-range", "consumer"])
    result.assert_nothing_lost()
    result.assert_state_complete(processed)
    result.assert_same_state(order_keys)


def test_our_java_consumer_loses_nothing_in_a_cooperative_group(zkconsumer_migration, java_consumer):
    """The same service's consumer as the Java team writes it (java/OrdersConsumer.java, on kafka-clients alone) as
    the cooperative-sticky group's members."""
    result = zkconsumer_migration.compare(app="orders.app:handle", member=java_consumer, scenario=DEPLOY,
                                          protocols=["legacy-range", "cooperative-sticky"])
    result.assert_nothing_lost()
    result.assert_state_complete(processed)
    result.assert_same_state(order_keys)

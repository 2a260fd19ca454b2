"""The order the main run's workers are handed the test modules in, and which modules go to one worker together
(tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: the test modules that took a worker longest (some 30 s and more, each, in a fresh clone's `make test`), longest
#: first: they are collected first, in this order, so that pytest-xdist hands them out first (scripts/run_tests.sh
#: runs it with --no-loadscope-reorder, which keeps the collection's order) and none of them starts last, when the
#: other workers have nothing left. A module not listed keeps its place after them; the order changes nothing else.
LONG_MODULES = (
    # the Spark run's (two workers, scripts/run_tests.sh): the Spark session's unit (SHARED_SERVERS) and the class
    # archive's JVMs first, so that they run beside each other from the start
    "tests/spark/test_stream_exactly_once.py", "tests/fleet/test_class_archive.py",
    "tests/spark/test_cluster_master.py", "tests/testing/test_example_project.py", "tests/test_chaos.py",
    # the main run's, by what each unit took a worker in a fresh clone's make test (run 60): the Spark example's
    # module, then the differential stories' unit (some two minutes together)
    "tests/test_examples.py", "tests/front/test_differential_restart.py", "tests/demo/test_demo.py",
    "tests/front/test_front_groups.py", "tests/consumer/test_original_consumer.py",
    "tests/migration/test_compare_move.py", "tests/testing/test_plugin.py", "tests/embedded/test_environment.py",
    "tests/migration/test_compare_upgrade.py", "tests/migration/test_compare_run.py",
    "tests/testing/test_migration_assertions.py", "tests/cli/test_sigterm_without_zookeeper.py",
    "tests/front/test_kafka_node_mixed_group.py", "tests/testing/test_client_settings_sasl.py",
    "tests/migration/test_compare_interrupts.py", "tests/chaos/test_chaos_run_ensemble.py",
    "tests/bridge/test_metadata_bridge.py", "tests/demo/test_demo_protocols.py",
    "tests/front/test_front_online_upgrade.py", "tests/testing/test_command_member.py",
)

#: the modules that share a costly server a worker starts for them (a session fixture: a Kafka node and a front, a Kafka
#: 3.9 broker, an ensemble of three ZooKeepers, a Spark session) go to one worker together, which starts it once
#: instead of once in each worker they would land on: fixture -> its modules. tests/conftest.py's scheduler hands each
#: list out as one unit, and fails the run in one line when a module uses one of these fixtures without being listed
#: under it.
SHARED_SERVERS: dict[str, tuple[str, ...]] = {
    "pair": ("tests/front/test_differential_groups.py", "tests/front/test_differential_restart.py",
             "tests/front/test_differential_migration.py", "tests/front/test_differential_offsets.py"),
    # test_original_consumer.py asks for it by name (request.getfixturevalue), which a check cannot see
    "kafka_zookeeper_mode": ("tests/consumer/test_original_consumer.py", "tests/embedded/test_kafka_zookeeper_mode.py"),
    "zookeeper_ensemble": ("tests/ensemble/test_connector_on_ensemble.py", "tests/ensemble/test_failover.py",
                           "tests/embedded/test_ensemble.py"),
    # the Spark run's local Spark session (tests/spark/conftest.py): a JVM of a gigabyte, some 30 s of CPU to start
    "spark": ("tests/spark/test_stream_exactly_once.py", "tests/spark/test_event_columns.py",
              "tests/spark/test_events_job.py", "tests/spark/test_fleet_job.py", "tests/spark/test_groups_source.py",
              "tests/spark/test_storm_sweep_job.py", "tests/spark/test_stream_rebalance.py",
              "tests/spark/test_stream_source.py"),
}
#: module -> the name of its unit: its fixture's, or its own
UNIT = {module: fixture for fixture, modules in SHARED_SERVERS.items() for module in modules}


def unit_of(nodeid: str) -> str:
    """The work unit of a test (its node id): the fixture whose server its module shares, else its module."""
    module = nodeid.split("::", 1)[0]
    return UNIT.get(module, module)


def unlisted(fixtures: Mapping[str, Iterable[str]]) -> list[str]:
    """``module -> the fixtures its tests use`` (closure included): each module that uses a fixture of
    :data:`SHARED_SERVERS` without being listed under it, as one line."""
    return [f"{module} uses the session fixture {fixture} but is not listed under it in tests/suite_order.py's "
            f"SHARED_SERVERS: its server would be started again in another worker"
            for module, used in fixtures.items() for fixture in SHARED_SERVERS
            if fixture in set(used) and module not in SHARED_SERVERS[fixture]]

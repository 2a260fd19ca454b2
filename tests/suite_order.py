"""The order the main run's workers are handed the test modules in (tests/conftest.py)."""

#: the test modules that took a worker longest (some 30 s and more, each, in a fresh clone's `make test`), longest
#: first: they are collected first, in this order, so that pytest-xdist hands them out first (scripts/run_tests.sh
#: runs it with --no-loadscope-reorder, which keeps the collection's order) and none of them starts last, when the
#: other workers have nothing left. A module not listed keeps its place after them; the order changes nothing else.
LONG_MODULES = (
    "tests/testing/test_example_project.py", "tests/demo/test_demo.py", "tests/front/test_front_groups.py",
    "tests/migration/test_compare_move.py", "tests/migration/test_compare_run.py",
    "tests/migration/test_compare_upgrade.py", "tests/testing/test_migration_assertions.py",
    "tests/testing/test_client_settings_sasl.py", "tests/testing/test_plugin.py",
    "tests/cli/test_sigterm_without_zookeeper.py", "tests/chaos/test_chaos_run_ensemble.py",
    "tests/embedded/test_environment.py", "tests/storm/test_storm_tables.py",
    "tests/consumer/test_original_consumer.py",
    "tests/front/test_differential_groups.py", "tests/migration/test_compare_interrupts.py",
    "tests/front/test_front_online_upgrade.py", "tests/testing/test_command_member.py", "tests/test_chaos.py",
    "tests/front/test_kafka_node_mixed_group.py", "tests/test_examples.py", "tests/front/test_differential_restart.py",
    "tests/bridge/test_metadata_bridge.py",
)

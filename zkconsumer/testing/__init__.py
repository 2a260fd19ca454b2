"""The pytest plugin for migration comparison tests a team writes for its own consumer (``pytest11`` entry point
``zkconsumer``; ``pip install 'zkconsumer[testing]'``).

- :mod:`~zkconsumer.testing.plugin`: the options and fixtures pytest loads (nothing starts until a test asks for a
  fixture, and importing it imports nothing heavier than pytest); the session's ZooKeeper and broker come from an
  option, a container or a local server (:mod:`zkconsumer.embedded.servers`);
- :mod:`~zkconsumer.testing.helpers`: what the plain fixtures hand out: unique names, topics, a producer, a group's
  owners and offsets, legacy members in-process or as processes;
- :mod:`~zkconsumer.testing.migration`: ``zkconsumer_migration.compare(app=..., scenario=..., protocols=[...])``, the
  comparison a test runs in a few lines, and its typed result with assertion helpers.

``docs/testing-a-migration.md`` is the user's page.
"""

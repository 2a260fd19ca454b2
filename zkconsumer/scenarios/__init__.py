"""Scenario files: what the demo and the migration comparison play, as data a teacher or a team writes.

:mod:`zkconsumer.scenarios.model` holds the values (a :class:`~zkconsumer.scenarios.model.Scenario` of scenes, each a
list of :class:`~zkconsumer.scenarios.model.Action`), :mod:`zkconsumer.scenarios.parse` reads and validates a TOML
file into them (one line naming the key and the problem), and ``shipped/`` holds the built-in scenarios by name.
Pure: no server, no process; the commands that play a scenario are in :mod:`zkconsumer.demo` and
:mod:`zkconsumer.migration`.
"""

"""The fleet: every consumer group of an ensemble at once, for the questions asked before a migration.

* :mod:`.snapshot`: one group as a JSON line (``zkconsumer snapshot`` writes them, the Spark jobs read them), a pure
  codec of frozen dataclasses.
* :mod:`.read`: the I/O edge that reads groups from ZooKeeper into those records.
* :mod:`.synthetic`: realistic made-up groups, for benchmarks and tests.
* :mod:`.analysis`: per group, the legacy assignment against the owners found and what the modern strategies would
  do (pure: what ``zkconsumer analyze fleet`` runs on Spark's executors).
* :mod:`.events`: per member, the figures of its rebalances from its JSON-line events (pure: what ``zkconsumer
  analyze events`` runs on the executors).
* :mod:`.pages`: the summary pages, from the small aggregates the jobs collect.

Nothing here imports Spark: the Spark jobs (:mod:`zkconsumer.spark.fleet_job`, :mod:`zkconsumer.spark.events_job`)
call these functions, and so do the plain loops the benchmark compares them with.
"""

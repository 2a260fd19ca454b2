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
* :mod:`.fleet_job` and :mod:`.events_job`: the Spark jobs of ``zkconsumer analyze fleet|events``, which run the
  pure functions above on Spark's executors; :mod:`.task_files` (each task's own Parquet files, their schemas read
  off the row dataclasses by :mod:`.row_schema`) and :mod:`.job_output` (an output directory complete or absent)
  serve both; :mod:`.spark_session` starts and stops the session a job runs in, a local one mapping Spark's classes
  from :mod:`.class_archive`.
* :mod:`.sweep_job`: the Spark job of ``zkconsumer simulate sweep``, a grid of storm simulations
  (:mod:`zkconsumer.storm.sweep`), one per task, into a Parquet table and a page of curves.

Only the jobs need PySpark (the ``spark`` extra), and they import it inside the functions that run on Spark, so
every module here imports without it: the plain loops the benchmark compares the jobs with call the same functions.
"""

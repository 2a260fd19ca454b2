"""Kafka Connect's worker assignors, eager and incremental cooperative, and a simulation of what their rebalances
cost: the Connect view of the migration from stop-the-world rebalancing to cooperative rebalancing.

Pure: assignors over frozen dataclasses (:mod:`zkconsumer.connect.model`), a simulation on a simulated clock that
takes parameters and returns results, and a page drawn from those results. Nothing here opens a socket.
"""

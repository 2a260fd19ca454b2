"""The rebalance storm at fleet scale, simulated: a discrete-event simulation of a consumer group under each protocol.

- :mod:`.event_loop`: the simulated clock, a heap of callbacks (and why not SimPy);
- :mod:`.parameters`: what every operation costs, each default with its source;
- :mod:`.request_queue`: a server serving one request at a time (a ZooKeeper server, the front's event loop);
- :mod:`.ensemble`: a ZooKeeper ensemble of such servers: reads and pings where a client is connected, writes through
  the leader;
- :mod:`.kazoo_connection`: a member's connection as kazoo's loop keeps it (pings, and the drop when one goes
  unanswered);
- :mod:`.group_measures`: what a group is measured by (partitions consuming, partition-seconds paused, stability);
- :mod:`.legacy_group`: the ZooKeeper-coordinated group, its nine rebalance steps, the real legacy assignors, its
  failures as the connector has them;
- :mod:`.modern_group`: what the modern groups share (the coordinator behind the front's queue, ticked at its
  deadlines);
- :mod:`.classic_group`: a classic group, its members driving the front's own classic group coordinator;
- :mod:`.consumer_group`: a KIP-848 group, its members driving the front's own consumer group coordinator;
- :mod:`.simulation`: a scenario played by every protocol, and its figures;
- :mod:`.calibration`: the model against real runs (run shapes, a calibration's committed record, the parameters
  fitted from real members' events, the agreement of a prediction with a real run), fed by
  ``benchmarks/storm_calibration.py``;
- :mod:`.sweep`: a grid of simulations (members x partitions x protocol x scenario x settings) and a point's row
  (``zkconsumer.fleet.sweep_job`` runs the grid on Spark);
- :mod:`.rendering`: how the results are shown: the calibration's and the predictions' Markdown tables, the generated
  regions of a page, the sweep's page of curves.

Pure: no threads, sockets or wall clock; the same inputs give the same figures.
"""

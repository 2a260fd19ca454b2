"""The Kafka-protocol front of the embedded broker: a server on its own port that clients bootstrap from, relaying
every request to the broker behind it except those it answers itself.

* :mod:`.wire`: frames, headers and bodies through kio (why kio: there);
* :mod:`.server`: the asyncio server, one broker connection per client connection, answers in order;
* :mod:`.rewrite`: Metadata, FindCoordinator and DescribeCluster answers pointed at the front;
* :mod:`.api_versions`: what ApiVersions advertises;
* :mod:`.handlers`: the table of the APIs the front answers itself: the group APIs (:mod:`.group_apis`), answered
  by Kafka's group coordinators, classic (:mod:`.classic_group`) and KIP-848 (:mod:`.consumer_group`), as pure state
  machines driven on the event loop (:mod:`.coordinator_runtime`), their groups kept as records
  (:mod:`.group_records`) in a topic of the broker and replayed at start (:mod:`.group_store`), unless
  ``--group-coordinator broker`` leaves them to the broker's own (the old versions ZooKeeper-era clients speak are
  answered by :mod:`.legacy_versions`);
* :mod:`.config`, :mod:`.command_line`: settings and options (``zkconsumer front``, ``python -m zkconsumer.front``);
* :mod:`.launcher`: the front as a child process; :mod:`.background`: on a thread of the calling process;
* :mod:`.client`: one request and its answer over a blocking socket (readiness probe, tests).

Needs the ``embedded`` extra (kio). See ``docs/front.md``.
"""

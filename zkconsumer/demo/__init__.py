"""The teaching demo (``zkconsumer demo``): a scenario played live by real group members and narrated as it happens.

* :mod:`.play`: where it plays (the embedded environment, servers named on the command line, or every protocol side
  by side through the migration comparison), what ``zkconsumer demo`` calls;
* :mod:`.rebalance_demo`: the legacy members' story, scene by scene, and what operators would see after each;
* :mod:`.narration`, :mod:`.modern_narration`, :mod:`.protocols_narration`: the rebalances told in words, the
  legacy connector's, the modern coordinator's and members', and several protocols at once (the coordinator's
  rounds read from the front's log as it grows, :mod:`.front_log_follower`);
* :mod:`.falling_behind`: a killed member's partitions shown falling behind until its session expires;
* :mod:`.classroom`, :mod:`.step_mode`, :mod:`.live_page`: ``--step`` and ``--serve``, the demo's observers in class;
* :mod:`.topic_placement`: ``--topic-placement``, where the topic's partitions would sit on a ZooKeeper-mode cluster.
"""

"""The Kafka-protocol front of the embedded broker: a server on its own port that clients bootstrap from, relaying
every request to the broker behind it except those it answers itself. Three subpackages, in layers (the import
contract in ``pyproject.toml`` says so), wired together here:

* :mod:`.proxy`: the server and its broker connections, the wire (kio), the answers it rewrites, the table of the
  APIs it answers itself with their kio adapters (the group APIs, the configs APIs), its settings, and the group
  store's writes to the broker;
* :mod:`.legacy`: the old API versions ZooKeeper-era clients speak (Fetch v0-v3 with the message formats' down- and
  up-conversion, ListOffsets v0, OffsetCommit and OffsetFetch v0 on ZooKeeper), plugged into the proxy;
* :mod:`.groups`: Kafka's group coordinator, one facade (:mod:`.groups.coordinator`) over the classic and KIP-848
  state machines, their records, and the runtime that drives them on the event loop.

* :mod:`.command_line`: ``zkconsumer front`` and ``python -m zkconsumer.front``, the front assembled and served;
* :mod:`.background`: a front on a thread of the calling process. As a child process:
  :mod:`zkconsumer.embedded.front_process`.

Needs the ``embedded`` extra (kio). See ``docs/front.md``.
"""

"""Kafka's group coordinator, as its ``group-coordinator`` module is shaped: the facade that decides
(:mod:`.coordinator`, Kafka's ``GroupMetadataManager``), the classic and KIP-848 state machines
(:mod:`.classic_group`, :mod:`.consumer_group`, their messages and reconciliation) on one clock
(:mod:`.coordinator_clock`, :mod:`.deadline_timers`), the groups' records (:mod:`.group_records`), the runtime that
drives the facade on the event loop and writes the records it returns (:mod:`.coordinator_runtime`, Kafka's
``CoordinatorRuntime``), and the per-group order of offset commits (:mod:`.offset_order`). Pure but for the runtime
and the offset order, which are asyncio."""

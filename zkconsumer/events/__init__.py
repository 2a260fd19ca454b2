"""The events' contract, shared by whoever emits them and whoever reads them: every event declared once
(:mod:`.catalogue`, one module per area, in :mod:`.spec`'s terms; ``docs/events.md`` is made from it), a line's check
against it (:mod:`.validation`), the rebalance steps as data, and the helpers that give every event the same field
shapes (durations, partition lists, timestamps).

Pure and below every other layer, so the connector, the trace tools, the demo and the Spark jobs read one vocabulary.
"""

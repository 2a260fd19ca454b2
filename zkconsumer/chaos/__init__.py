"""The chaos run's analysis: what a run under faults recorded, judged against the group's invariants.

``benchmarks/chaos.py`` drives the run (member processes, a producer, seeded faults) and hands what it recorded to
:func:`.analysis.analyse`; everything here is pure, so that each rule is tested on hand-made timelines.

* :mod:`.records`: what the run records: deliveries, pauses, the spans of the faults.
* :mod:`.tenures`: who owned which partition when, read from each member's own events.
* :mod:`.overlaps`: two members delivering one partition at once, and a member woken from a pause handing out what
  another member claimed meanwhile.
* :mod:`.late_deliveries`: a member delivering a partition after its own ownership of it ended.
* :mod:`.unfetched`: spans in which no member fetched a partition.
* :mod:`.duplicates`: messages delivered more than once, each charged to the fault that caused it.
* :mod:`.analysis`: the invariants applied to one run, as findings and violations.
* :mod:`.report`: the run's JSON report and its one-line verdict.
"""

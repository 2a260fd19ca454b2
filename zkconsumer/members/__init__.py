"""Member processes of a consumer group, as the demo, the migration comparison and the chaos run use them.

The processes themselves (:mod:`~zkconsumer.members.legacy_member`, :mod:`~zkconsumer.members.modern_member`, and a
team's own consumer run as a command, :mod:`~zkconsumer.members.command_member`, whose reports are read into the
same events),
their command lines, declared once for the parser and the starter's argv (:mod:`~zkconsumer.members.command_line`,
each option a field made by :mod:`~zkconsumer.members.option_field`), and how they learn to leave
(:mod:`~zkconsumer.members.stop_signals`); on the starter's side, the processes started, killed and stopped
(:mod:`~zkconsumer.members.group`), their JSON events gathered into one queue (:mod:`~zkconsumer.members.inbox`) and
written to one file (:mod:`~zkconsumer.members.recorder`), and the rule that says a group has settled
(:mod:`~zkconsumer.members.settle`).
"""

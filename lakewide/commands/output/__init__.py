"""How commands speak: the consoles (stdout for answers, stderr for progress), ``--quiet`` and
``--log-format text|json`` with their JSON events, the heartbeat, live progress and the summary,
and rows printed as tables. Imports no command and nothing of ``commands.services``."""

"""The subcommands of ``lakewide``, one module each; ``lakewide.cli`` registers them on its group.

What they share: ``output`` (how a command speaks: consoles, JSON events, progress, tables) and
``services`` (options and selection in ``services.context``, the Spark start, the run, seed and
test services). No command module imports another.
"""

"""The statements of a model's run, one rule a module: bootstrap, column-scoped MERGE,
changelog reads, combined changes, delta joins, restate, the changelog a key table produces,
and a snapshot model's statements.

Imports ``folds`` and the folders below it (``model``, ``aggregates``, ``trees``)."""

"""Folding one key's rows with the merge engine's semantics: the rows folded, the fold per
key, the aggregates and WHEN clauses of a folded batch, and the per-source pre-folds of a
bootstrap assembled per key.

Imports ``model``, ``aggregates`` and ``trees`` only."""

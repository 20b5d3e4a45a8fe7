"""Statements beside a model's run: data tests as queries of failing rows, ``lakewide diff``'s
table diff, ``lakewide maintain``'s procedures, column lineage and join type errors told as
the model's join.

Imports ``model``, ``trees`` and ``aggregates`` only; nothing in the compiler imports it."""

"""Aggregate functions of the aggregation engine (Paimon's names): the registry, the functions
that gather many values into one, what a fold and combine take, and which function folds
each column of a model.

Imports no other compiler folder."""

"""The aggregate functions of the aggregation engine (Paimon's names): what a config may name.

One entry per function, below both the config (which checks names and options) and the compiler
(``lakewide.compiler.aggregates.aggregates``, which owns each function's SQL and must register
exactly these names).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AggregateFunction:
    """What a model's config sees of one function."""

    name: str
    retracts: bool = False  # retract rows (-U/-D) reach it and it takes them back
    options: tuple[str, ...] = ()  # options beyond the common ones (``ignore_retract``)
    accumulating: bool = False  # folding the same records twice changes the value

    @property
    def idempotent(self) -> bool:
        """Folding the same records a second time leaves the value as it was (a source read
        again in full is harmless): every function but the accumulating ones."""
        return not self.accumulating


FUNCTIONS: dict[str, AggregateFunction] = {
    f.name: f
    for f in (
        AggregateFunction("sum", retracts=True, accumulating=True),
        AggregateFunction("product", retracts=True, accumulating=True),
        AggregateFunction("max"),
        AggregateFunction("min"),
        AggregateFunction("last_value", retracts=True),
        AggregateFunction("last_non_null_value", retracts=True),
        AggregateFunction("first_value"),
        AggregateFunction("first_non_null_value"),
        AggregateFunction("listagg", options=("delimiter", "distinct"), accumulating=True),
        AggregateFunction("bool_and"),
        AggregateFunction("bool_or"),
        AggregateFunction("collect", retracts=True, options=("distinct",), accumulating=True),
        AggregateFunction("merge_map", retracts=True),
    )
}

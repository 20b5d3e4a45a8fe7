"""Rule: which aggregate function folds each column of a model, with its options.

A column's aggregate is resolved once, when the model is analyzed: the registry's function
(``aggregates.REGISTRY``), the options the model gives it, and what follows from both
(whether retract rows reach it, whether reading its records twice is harmless).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lakewide.compiler.aggregates.aggregates import REGISTRY, Aggregate
from lakewide.project.config.specs import DEFAULT_AGGREGATE, AggregateSpec


@dataclass(frozen=True)
class ColumnAggregate:
    """The aggregate function of one column, as its spec (``config.AggregateSpec``) names it."""

    column: str
    function: Aggregate
    spec: AggregateSpec
    configured: bool = False  # named in ``aggregates`` (not a default)

    @property
    def name(self) -> str:
        """The function's registry name."""
        return self.function.name

    @property
    def options(self) -> dict[str, Any]:
        """The options the model sets (``function`` excluded)."""
        return self.spec.options

    @property
    def retracts(self) -> bool:
        """Whether retract rows reach the function: it can retract and the model does not
        ``ignore_retract`` (Paimon's ``fields.<col>.ignore-retract``, for every function)."""
        return self.spec.retracts

    @property
    def refuses_retracts(self) -> bool:
        """The function cannot retract and the model does not say to ignore retracts."""
        return self.spec.refuses_retracts

    @property
    def idempotent(self) -> bool:
        """Folding the same records again leaves the value as it was."""
        return self.function.idempotent


def column_aggregate(column: str, spec: AggregateSpec, *, configured: bool) -> ColumnAggregate:
    """``column``'s aggregate from its (validated) spec."""
    return ColumnAggregate(column, REGISTRY[spec.function], spec, configured)


def default_aggregate(column: str) -> ColumnAggregate:
    """The aggregate of a column the model names none for (Paimon's default)."""
    return column_aggregate(column, DEFAULT_SPEC, configured=False)


DEFAULT_SPEC = AggregateSpec.model_validate(DEFAULT_AGGREGATE)

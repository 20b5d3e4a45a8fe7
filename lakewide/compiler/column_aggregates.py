"""Rule: which aggregate function folds each column of a model, with its options.

A column's aggregate is resolved once, when the model is analyzed: the registry's function
(``aggregates.REGISTRY``), the options the model gives it, and what follows from both
(whether retract rows reach it, whether reading its records twice is harmless).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakewide.compiler.aggregates import COMMON_OPTIONS, REGISTRY, Aggregate

DEFAULT_FUNCTION = "last_non_null_value"


class SpecError(ValueError):
    """An aggregate spec the registry cannot take (the message says how to fix it)."""


@dataclass(frozen=True)
class ColumnAggregate:
    """The aggregate function of one column and its options (``function`` excluded)."""

    column: str
    function: Aggregate
    options: dict[str, Any] = field(default_factory=dict)
    configured: bool = False  # named in ``aggregates`` (not a default)

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def retracts(self) -> bool:
        """Whether retract rows reach the function: it can retract and the model does not
        ``ignore_retract`` (Paimon's ``fields.<col>.ignore-retract``, for every function)."""
        return self.function.retracts and not self.options.get("ignore_retract")

    @property
    def refuses_retracts(self) -> bool:
        """The function cannot retract and the model does not say to ignore retracts."""
        return not self.function.retracts and not self.options.get("ignore_retract")

    @property
    def idempotent(self) -> bool:
        """Folding the same records again leaves the value as it was."""
        return self.function.idempotent


def aggregate_spec(spec: Any) -> tuple[Aggregate, dict[str, Any]]:
    """The registry function and options of ``'sum'`` or ``{'function': 'listagg', ...}``.

    Raises SpecError naming the accepted functions or options.
    """
    accepted = ", ".join(REGISTRY)
    if not isinstance(spec, (str, dict)):
        raise SpecError(f"expected a function name (one of {accepted}) or a mapping like "
                        "{'function': 'listagg', 'delimiter': '|'}")
    options = {"function": spec} if isinstance(spec, str) else dict(spec)
    name = options.pop("function", None)
    if name is None:
        raise SpecError(f"options {sorted(options)} name no function: add 'function' "
                        f"(one of {accepted}), e.g. {{'function': 'listagg', 'delimiter': '|'}}")
    if name not in REGISTRY:
        raise SpecError(f"unknown aggregate function {name!r}; expected one of {accepted}")
    function = REGISTRY[str(name)]
    unknown = set(options) - set(COMMON_OPTIONS) - set(function.options)
    if unknown:
        raise SpecError(f"option '{sorted(unknown)[0]}' does not apply to {name}; accepted: "
                        f"{', '.join((*COMMON_OPTIONS, *function.options))}")
    return function, options


def column_aggregate(column: str, spec: Any, *, configured: bool) -> ColumnAggregate:
    """``column``'s aggregate from its spec (raises SpecError)."""
    function, options = aggregate_spec(spec)
    return ColumnAggregate(column, function, options, configured)


def default_aggregate(column: str) -> ColumnAggregate:
    """The aggregate of a column the model names none for (Paimon's default)."""
    return ColumnAggregate(column, REGISTRY[DEFAULT_FUNCTION])

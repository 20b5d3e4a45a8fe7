"""The structured values of a model's ``config()``: sequence groups and aggregate specs.

Both keep the shape the user wrote when dumped (``{'g_1': ['a']}``, ``'sum'``), so a model's
definition digest (``lakewide.definition``) does not change with their typing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.functional_validators import ModelWrapValidatorHandler

from lakewide.project.config.aggregate_functions import FUNCTIONS
from lakewide.vocabulary.errors import ConfigError

M = TypeVar("M", bound=BaseModel)

POLICY_CHOICES = (
    "choose one: 1. ignore_delete=true to drop delete and update-before rows; "
    "2. remove_record_on_delete=true to remove the whole row on -D; "
    "3. sequence_groups={...} to retract only the columns of a group"
)
DELETE_POLICIES = (
    "partial_update cannot take delete rows (row_kind_column is set) without a "
    "policy; " + POLICY_CHOICES
)
COMMON_OPTIONS = ("function", "ignore_retract")
DEFAULT_AGGREGATE = "last_non_null_value"  # Paimon's fields.default-aggregate-function


class RuleError(ValueError):
    """A config rule broken: the key to name (empty: where the value is), the message saying
    how to fix it, and whether it is a compile error (a merge-engine rule, as Paimon checks it)
    or a plain config error (the config's own shape)."""

    def __init__(self, key: str, message: str, *, compile_error: bool = True) -> None:
        super().__init__(message)
        self.key, self.message, self.compile_error = key, message, compile_error


def as_list(value: Any) -> list[str]:
    """A column name, ``'a, b'`` or a list of names, as a list of names."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError("expected a column name or a list of column names")


class SequenceGroup(BaseModel):
    """``sequence_groups={'g_1,g_2': ['a', 'b']}``: columns merged by their own sequence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str  # as written in sequence_groups
    sequence: list[str]  # the group's sequence fields, in order
    columns: list[str]  # the columns it guards

    @classmethod
    def of(cls, key: str, columns: list[str]) -> SequenceGroup:
        """The group written as ``key: columns``."""
        return cls(
            key=key, sequence=[f.strip() for f in key.split(",") if f.strip()], columns=columns
        )

    @property
    def name(self) -> str:
        """The group's name, as ``remove_record_on_sequence_group`` gives it."""
        return ",".join(self.sequence)

    @property
    def all_columns(self) -> list[str]:
        """The guarded columns, then the sequence fields."""
        return [*self.columns, *self.sequence]


class AggregateSpec(BaseModel):
    """``'sum'`` or ``{'function': 'listagg', 'delimiter': '|', 'distinct': true}``: a registered
    function (``lakewide.project.config.aggregate_functions``) and the options it takes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    function: str
    delimiter: str | None = None
    distinct: bool = False
    ignore_retract: bool = False
    _raw: Any = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _registered(
        cls, data: Any, handler: ModelWrapValidatorHandler[AggregateSpec]
    ) -> AggregateSpec:
        spec = handler(_spec_options(data))
        spec._raw = data
        return spec

    @model_serializer
    def _as_written(self) -> Any:
        return self._raw if self._raw is not None else self.function

    @property
    def options(self) -> dict[str, Any]:
        """The options the model sets, ``function`` excluded."""
        return {k: getattr(self, k) for k in self.model_fields_set if k != "function"}

    @property
    def retracts(self) -> bool:
        """Whether retract rows reach the function (it retracts, no ``ignore_retract``)."""
        return FUNCTIONS[self.function].retracts and not self.ignore_retract

    @property
    def refuses_retracts(self) -> bool:
        """The function cannot retract and the model does not say to ignore retracts."""
        return not FUNCTIONS[self.function].retracts and not self.ignore_retract


def retractable() -> list[str]:
    """The registered functions that can retract."""
    return [name for name, function in FUNCTIONS.items() if function.retracts]


def _spec_options(data: Any) -> dict[str, Any]:
    """A spec as options, checked against the registry (unknown names list accepted ones)."""
    accepted = ", ".join(FUNCTIONS)
    if isinstance(data, AggregateSpec):
        return {k: getattr(data, k) for k in data.model_fields_set}
    if not isinstance(data, (str, dict)):
        raise RuleError(
            "",
            f"expected a function name (one of {accepted}) or a mapping like "
            "{'function': 'listagg', 'delimiter': '|'}",
        )
    options = {"function": data} if isinstance(data, str) else dict(data)
    name = options.get("function")
    if name is None:
        raise RuleError(
            "",
            f"options {sorted(options)} name no function: add 'function' "
            f"(one of {accepted}), e.g. {{'function': 'listagg', 'delimiter': '|'}}",
        )
    if name not in FUNCTIONS:
        raise RuleError("", f"unknown aggregate function {name!r}; expected one of {accepted}")
    unknown = set(options) - set(COMMON_OPTIONS) - set(FUNCTIONS[str(name)].options)
    if unknown:
        raise RuleError(
            "",
            f"option '{sorted(unknown)[0]}' does not apply to {name}; accepted: "
            f"{', '.join((*COMMON_OPTIONS, *FUNCTIONS[str(name)].options))}",
        )
    return options


def unknown_key(
    key: str, accepted: Iterable[str], *, what: str = "key", label: str = "Accepted"
) -> str:
    """Why ``key`` is refused: the nearest accepted key, then all of them."""
    names = list(accepted)
    near = difflib.get_close_matches(key, names, n=1)
    hint = f" Did you mean '{near[0]}'?" if near else ""
    return f"unknown {what} '{key}'.{hint} {label}: {', '.join(names)}"


class Strict(BaseModel):
    """A mapping of a project file: unknown keys are refused with the nearest accepted one."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, coerce_numbers_to_str=True
    )

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        if isinstance(data, dict):
            accepted = [f.alias or name for name, f in cls.model_fields.items()]
            for key in data:
                if key not in accepted:
                    raise RuleError(str(key), unknown_key(str(key), accepted), compile_error=False)
        return data


def checked(model: type[M], data: Any, *, key: str, **where: Any) -> M:
    """``data`` validated as ``model``, or a ConfigError naming the file, the key (under
    ``key``, e.g. ``sources[0].tables[1].name``) and what is accepted."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        cause = (first.get("ctx") or {}).get("error")
        loc = [*first["loc"], *([cause.key] if isinstance(cause, RuleError) else [])]
        full = key + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
        if isinstance(cause, RuleError):
            raise ConfigError(cause.message, key=full, **where) from None
        raise ConfigError(
            f"invalid value {first.get('input')!r}: {first['msg']}", key=full, **where
        ) from None

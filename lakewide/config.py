"""Model configuration: the keys of ``{{ config(...) }}``, typed per merge engine, and their rules.

``parse_model_config`` picks the model class by ``merge_engine`` (a table or view has none),
rejects unknown keys and keys the engine does not take, and checks the rules that need only
the config (Paimon's, listed in the README's "Validation") as model validators. Rules that need
the model's columns are the compiler's (``lakewide.compiler.validate``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypedDict

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from lakewide.config_specs import (
    DEFAULT_AGGREGATE,
    DELETE_POLICIES,
    POLICY_CHOICES,
    AggregateSpec,
    RuleError,
    SequenceGroup,
    as_list,
    retractable,
    unknown_key,
)
from lakewide.errors import CompileError, ConfigError

__all__ = [
    "ACCEPTED_KEYS",
    "DELETE_POLICIES",
    "ENGINES",
    "POLICY_CHOICES",
    "AggregateSpec",
    "AggregationConfig",
    "DeduplicateConfig",
    "FirstRowConfig",
    "KeyTableConfig",
    "ModelConfig",
    "PartialUpdateConfig",
    "SequenceGroup",
    "TableConfig",
    "parse_model_config",
]

MergeEngine = Literal["partial_update", "aggregation", "deduplicate", "first_row"]
ENGINES = ("partial_update", "aggregation", "deduplicate", "first_row")
Materialized = Literal["view", "table", "incremental", "primary_key"]
WriteMode = Literal["copy-on-write", "merge-on-read"]


class _Keys(BaseModel):
    """Every key a model's ``config()`` may set, typed; the classes below hold the rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    merge_engine: MergeEngine | None = None
    materialized: Materialized | None = None
    primary_key: list[str] = []  # tables: the order ``lakewide show`` prints rows in
    sequence_field: list[str] = []
    sequence_groups: list[SequenceGroup] = []
    aggregates: dict[str, AggregateSpec] = {}
    default_aggregate: AggregateSpec | None = None
    ignore_delete: bool = False
    ignore_update_before: bool = False
    remove_record_on_delete: bool = False
    remove_record_on_sequence_group: list[str] = []
    row_kind_column: str | None = None
    partition_by: list[str] = []
    sort_by: list[str] = []
    table_properties: dict[str, str] = {}
    format_version: Literal[1, 2, 3] = 2
    write_mode: WriteMode | None = None
    merge_filter: bool = False
    changelog_producer: Literal["none", "lookup"] | None = None  # None: when a key table refs it
    schema_: str | None = None
    alias: str | None = None
    tags: list[str] = []
    enabled: bool = True
    description: str | None = None

    @field_validator(
        "primary_key",
        "sequence_field",
        "partition_by",
        "sort_by",
        "tags",
        "remove_record_on_sequence_group",
        mode="before",
    )
    @classmethod
    def _listify(cls, value: Any) -> list[str]:
        return as_list(value)

    @field_validator("sequence_groups", mode="before")
    @classmethod
    def _groups(cls, value: Any) -> list[Any]:
        if isinstance(value, list):
            return value
        if not isinstance(value, dict):
            raise ValueError("expected a mapping like {'g_1': ['a', 'b']}")
        return [SequenceGroup.of(str(k), as_list(v)) for k, v in value.items()]

    @model_serializer(mode="wrap")
    def _groups_as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``sequence_groups`` dumped as written (a model's definition digest reads the dump)."""
        out: dict[str, Any] = handler(self)  # a model serializes to a mapping
        if isinstance(out.get("sequence_groups"), list):
            out["sequence_groups"] = {g["key"]: g["columns"] for g in out["sequence_groups"]}
        return out

    @field_validator("table_properties", mode="before")
    @classmethod
    def _props(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ValueError("expected a mapping of property name -> value")
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}

    @model_validator(mode="after")
    def _rules(self) -> _Keys:
        self.rules()
        return self

    def rules(self) -> None:
        """Raise RuleError for a broken rule (each class adds its own)."""

    @property
    def kind(self) -> str:
        """The effective materialization: ``primary_key`` whenever a merge engine is set."""
        if self.merge_engine is not None:
            return "primary_key"
        return self.materialized or "table"

    # The model's ``schema`` key (the namespace). It shadows pydantic's deprecated
    # ``BaseModel.schema()`` classmethod on purpose (use ``model_json_schema()``), hence the
    # incompatible override.
    @property
    def schema(self) -> str | None:  # type: ignore[override]
        return self.schema_


TABLE_KEYS = (
    "merge_engine",
    "materialized",
    "primary_key",
    "partition_by",
    "sort_by",
    "table_properties",
    "format_version",
    "write_mode",
    "changelog_producer",
    "schema_",
    "alias",
    "tags",
    "enabled",
    "description",
)


class TableConfig(_Keys):
    """A table or view model (no merge engine): rebuilt from its query, never merged."""

    merge_engine: None = None

    def rules(self) -> None:
        """A merge engine's keys need a merge engine."""
        if self.materialized == "primary_key":
            raise RuleError(
                "merge_engine",
                "materialized='primary_key' needs a merge_engine "
                f"(expected one of {', '.join(ENGINES)})",
                compile_error=False,
            )
        if self.changelog_producer == "lookup":
            raise RuleError(
                "changelog_producer",
                "changelog_producer='lookup' needs a "
                "merge_engine (a table or view model is rebuilt, not merged: it "
                "has no row changes to keep)",
                compile_error=False,
            )
        for key, field in type(self).model_fields.items():
            if key not in TABLE_KEYS and getattr(self, key) != field.default:
                raise RuleError(
                    key,
                    f"{key} applies to primary-key tables: set merge_engine "
                    f"(one of {', '.join(ENGINES)}) or drop {key}",
                    compile_error=False,
                )


class KeyTableConfig(_Keys):
    """A primary-key table folded by a merge engine (engine classes refuse the keys they do
    not take, naming the engine that does)."""

    merge_engine: MergeEngine
    takes_groups: ClassVar[bool] = False  # sequence_groups and the remove_record_* keys
    takes_aggregates: ClassVar[bool] = False  # aggregates and default_aggregate

    def rules(self) -> None:
        """The rules every key table follows; engine classes add theirs (RuleError)."""
        if not self.primary_key:
            raise RuleError(
                "primary_key",
                f"merge_engine='{self.merge_engine}' needs "
                "primary_key (a column name or a list of column names)",
                compile_error=False,
            )
        if self.materialized in ("view", "table", "incremental"):
            raise RuleError(
                "materialized",
                f"materialized='{self.materialized}' conflicts with "
                "merge_engine; drop materialized (a merge engine implies a "
                "primary-key table)",
                compile_error=False,
            )
        for key in (
            "sequence_groups",
            "remove_record_on_delete",
            "remove_record_on_sequence_group",
        ):
            if getattr(self, key) and not self.takes_groups:
                raise RuleError(
                    key,
                    f"{key} applies to merge_engine='partial_update', not '{self.merge_engine}'",
                )
        if (self.aggregates or self.default_aggregate) and not self.takes_aggregates:
            raise RuleError(
                "aggregates",
                "aggregates apply to merge_engine='aggregation' (or "
                f"partial_update sequence groups), not '{self.merge_engine}'",
            )
        if self.row_kind_column in self.primary_key + self.sequence_field:
            raise RuleError(
                "row_kind_column", "the row kind column cannot be a key or sequence column"
            )
        if self.ignore_update_before and not self.row_kind_column:
            raise RuleError(
                "ignore_update_before",
                "ignore_update_before drops -U rows, which "
                "arrive through row_kind_column; set row_kind_column or drop "
                "ignore_update_before",
            )
        retracts = self.row_kind_column is not None and not self.ignore_delete
        for column, spec in self.aggregates.items():
            if retracts and spec.refuses_retracts:
                raise RuleError(
                    f"aggregates.{column}",
                    f"{spec.function} cannot retract (-U/-D "
                    f"rows arrive through row_kind_column '{self.row_kind_column}'); "
                    f"set aggregates={{'{column}': {{'function': '{spec.function}', "
                    "'ignore_retract': true}} or ignore_delete=true. Retractable: "
                    f"{', '.join(retractable())}",
                )


class PartialUpdateConfig(KeyTableConfig):
    """``merge_engine='partial_update'``: non-null values overwrite, groups by their sequence."""

    merge_engine: Literal["partial_update"]
    takes_groups: ClassVar[bool] = True
    takes_aggregates: ClassVar[bool] = True

    def rules(self) -> None:
        """Paimon's partial-update rules: one delete policy, groups without keys, aggregate
        functions only inside groups."""
        super().rules()
        if self.ignore_delete and self.remove_record_on_delete:
            raise RuleError(
                "remove_record_on_delete",
                "ignore_delete and remove_record_on_delete contradict each other; keep one",
            )
        if self.remove_record_on_delete and self.sequence_groups:
            raise RuleError(
                "remove_record_on_delete",
                "remove_record_on_delete cannot be "
                "combined with sequence_groups (groups retract their own columns); "
                "use remove_record_on_sequence_group",
            )
        if self.row_kind_column and not (
            self.ignore_delete or self.remove_record_on_delete or self.sequence_groups
        ):
            raise RuleError("row_kind_column", DELETE_POLICIES)
        if self.remove_record_on_sequence_group and not self.row_kind_column:
            raise RuleError(
                "remove_record_on_sequence_group",
                "removing rows on a group retract needs row_kind_column (where retracts come from)",
            )
        self._groups_rules()

    def _groups_rules(self) -> None:
        seen: dict[str, str] = {}
        for group in self.sequence_groups:
            for column in group.all_columns:
                if column in self.primary_key:
                    raise RuleError(
                        "sequence_groups",
                        f"primary key column '{column}' cannot be in sequence group '{group.name}'",
                    )
                if column in seen and seen[column] != group.name:
                    raise RuleError(
                        "sequence_groups",
                        f"column '{column}' is in two sequence "
                        f"groups ('{seen[column]}' and '{group.name}')",
                    )
                seen[column] = group.name
        names = {g.name for g in self.sequence_groups}
        for name in self.remove_record_on_sequence_group:
            if name not in names:
                raise RuleError(
                    "remove_record_on_sequence_group",
                    f"'{name}' is not a sequence "
                    f"group; groups: {', '.join(sorted(names)) or 'none'}",
                )
        for column, spec in self.aggregates.items():
            if column not in seen and spec.function != DEFAULT_AGGREGATE:
                raise RuleError(
                    f"aggregates.{column}",
                    f"partial_update can aggregate "
                    f"'{column}' with {spec.function} only inside a sequence group; "
                    "add it to sequence_groups",
                )


class AggregationConfig(KeyTableConfig):
    """``merge_engine='aggregation'``: every value column folded by its aggregate function."""

    merge_engine: Literal["aggregation"]
    takes_aggregates: ClassVar[bool] = True


class DeduplicateConfig(KeyTableConfig):
    """``merge_engine='deduplicate'``: the last row by sequence wins; a delete deletes."""

    merge_engine: Literal["deduplicate"]


class FirstRowConfig(KeyTableConfig):
    """``merge_engine='first_row'``: the first arrived row wins."""

    merge_engine: Literal["first_row"]

    def rules(self) -> None:
        """first_row has no sequence and cannot take retracts."""
        super().rules()
        if self.sequence_field:
            raise RuleError(
                "sequence_field",
                "first_row keeps the first arrived row and takes "
                "no sequence_field; drop it or use merge_engine='deduplicate'",
            )
        if self.row_kind_column and not self.ignore_delete:
            raise RuleError(
                "ignore_delete", "first_row cannot take -U/-D rows; set ignore_delete=true"
            )


def _engine_of(value: Any) -> str:
    engine = value.get("merge_engine") if isinstance(value, dict) else value.merge_engine
    return str(engine) if engine is not None else "table"


ModelConfig = Annotated[
    Annotated[TableConfig, Tag("table")]
    | Annotated[PartialUpdateConfig, Tag("partial_update")]
    | Annotated[AggregationConfig, Tag("aggregation")]
    | Annotated[DeduplicateConfig, Tag("deduplicate")]
    | Annotated[FirstRowConfig, Tag("first_row")],
    Discriminator(_engine_of),
]
_ADAPTER: TypeAdapter[ModelConfig] = TypeAdapter(ModelConfig)

_ALIASES = {"schema": "schema_"}
ACCEPTED_KEYS = sorted(
    ("schema" if name == "schema_" else name) for name in PartialUpdateConfig.model_fields
)


def _key_of(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc[1:]]  # loc[0] is the class's tag
    return ".".join("schema" if p == "schema_" else p for p in parts)


def _value_at(raw: dict[str, Any], key: str) -> Any:
    value: Any = raw
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


class _Where(TypedDict):
    """Where a model's config is written, for its errors."""

    path: Path | str
    line: int | None
    model: str | None


def parse_model_config(
    raw: dict[str, Any], *, path: Path | str, line: int | None = None, model: str | None = None
) -> ModelConfig:
    """Validate the keyword arguments a model passed to ``config()``.

    Unknown keys suggest the nearest accepted key; wrong values name the key and what is
    accepted; a key the merge engine does not take, or keys that contradict each other, name
    the key and the fix.
    """
    where: _Where = {"path": path, "line": line, "model": model}
    for key in raw:
        if key not in ACCEPTED_KEYS:
            raise ConfigError(
                unknown_key(key, ACCEPTED_KEYS, what="config key", label="Accepted keys"),
                key=key,
                **where,
            )
    engine = raw.get("merge_engine")
    if engine is not None and engine not in ENGINES:
        raise ConfigError(
            f"invalid value {engine!r}: expected one of {', '.join(ENGINES)}",
            key="merge_engine",
            **where,
        )
    data = {_ALIASES.get(k, k): v for k, v in raw.items()}
    try:
        config = _ADAPTER.validate_python(data)
    except ValidationError as err:
        first = err.errors()[0]
        cause = (first.get("ctx") or {}).get("error")
        key = _key_of(first["loc"])
        if isinstance(cause, RuleError):
            error = CompileError if cause.compile_error else ConfigError
            raise error(cause.message, key=cause.key or key, **where) from None
        raise ConfigError(
            f"invalid value {_value_at(raw, key)!r}: {first['msg']}", key=key, **where
        ) from None
    return config

"""The keys of ``{{ config(...) }}`` every model takes, and the table and key-table models.

The per-engine models (one module each in ``lakewide.project.config.engines``) extend
``KeyTableConfig``;
``lakewide.project.config.model_config.parse_model_config`` picks one by ``merge_engine``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from lakewide.project.config.engines.base import ENGINE_NAMES, Engine, MergeEngine
from lakewide.project.config.kinds import ModelKind, kind_of
from lakewide.project.config.maintenance import (
    MaintenanceSpec,
    RetentionSpec,
    TtlSpec,
    retention_granularity,
)
from lakewide.project.config.specs import (
    AggregateSpec,
    RuleError,
    SequenceGroup,
    as_list,
    retractable,
)
from lakewide.project.durations import normalized

Materialized = Literal["view", "table", "incremental", "primary_key", "snapshot"]
WriteMode = Literal["copy-on-write", "merge-on-read"]
JoinSemantics = Literal["lookup", "delta"]


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
    # incremental runs: read the changes or re-fold every source, whichever costs less (auto)
    refresh_mode: Literal["auto", "incremental", "full"] = "auto"
    # what a run does when the model no longer matches its table's stored contract
    # (docs/how-to/schema-changes.md); None: append_new_columns. dbt's ``ignore`` cannot apply
    # to a key table
    on_schema_change: Literal["append_new_columns", "sync_all_columns", "fail"] | None = None
    maintenance: MaintenanceSpec = MaintenanceSpec()  # lakewide maintain (config_maintenance)
    retention: RetentionSpec | None = None
    ttl: TtlSpec | None = None
    # joined relation (alias or table name) -> its join semantics (docs/concepts/dimension-joins.md)
    joins: dict[str, JoinSemantics] = {}
    schema_: str | None = None
    alias: str | None = None
    tags: list[str] = []
    enabled: bool = True
    description: str | None = None
    # a target lag (lakewide.project.durations); ``run --watch`` keeps it
    freshness: str | None = None

    @field_validator("freshness", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> str | None:
        return None if value is None else normalized(value)

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

    @field_validator("joins", mode="before")
    @classmethod
    def _joins(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(
                "expected a mapping of joined relation (alias or table name) -> 'lookup' or "
                "'delta', like {'customers': 'delta'}"
            )
        return {str(k): v for k, v in value.items()}

    @field_validator("table_properties", mode="before")
    @classmethod
    def _props(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ValueError("expected a mapping of property name -> value")
        for name, given in value.items():
            if given is None or isinstance(given, list | dict | tuple | set):
                raise ValueError(
                    f"property {name!r} has the value {given!r}; Iceberg table properties are "
                    "text, numbers or booleans, e.g. {'write.target-file-size-bytes': 134217728}"
                )
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}

    @model_validator(mode="after")
    def _rules(self) -> _Keys:
        self.rules()
        return self

    def rules(self) -> None:
        """Raise RuleError for a broken rule (each class adds its own)."""

    @property
    def kind(self) -> ModelKind:
        """The effective materialization: a key table whenever a merge engine is set."""
        return kind_of(self.materialized, self.merge_engine)

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
    "maintenance",
    "schema_",
    "alias",
    "tags",
    "enabled",
    "description",
    "freshness",
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
                f"(expected one of {', '.join(ENGINE_NAMES)})",
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
                    f"{key} applies to key tables: set merge_engine "
                    f"(one of {', '.join(ENGINE_NAMES)}) or drop {key}",
                    compile_error=False,
                )


class KeyTableConfig(_Keys):
    """A key table: a primary-key table folded by a merge engine (engine classes refuse the
    keys they do not take, naming the engine that does)."""

    merge_engine: MergeEngine
    engine: ClassVar[Engine]  # the engine's traits (each engine module's class sets it)

    def rules(self) -> None:
        """The rules every key table follows; engine classes add theirs (RuleError)."""
        if not self.primary_key:
            raise RuleError(
                "primary_key",
                f"merge_engine='{self.merge_engine}' needs "
                "primary_key (a column name or a list of column names)",
                compile_error=False,
            )
        if self.retention is not None:
            retention_granularity(self.retention, self.partition_by)
        if self.materialized in ("view", "table", "incremental", "snapshot"):
            raise RuleError(
                "materialized",
                f"materialized='{self.materialized}' conflicts with "
                "merge_engine; drop materialized (a merge engine implies a "
                "key table)",
                compile_error=False,
            )
        for key in (
            "sequence_groups",
            "remove_record_on_delete",
            "remove_record_on_sequence_group",
        ):
            if getattr(self, key) and not self.engine.takes_groups:
                raise RuleError(
                    key,
                    f"{key} applies to merge_engine='partial_update', not '{self.merge_engine}'",
                )
        if (self.aggregates or self.default_aggregate) and not self.engine.takes_aggregates:
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

"""The config of a ``materialized='snapshot'`` model: dbt's snapshot keys (dbt 1.9/1.10).

A snapshot keeps the history of a dimension as type-2 rows: ``unique_key`` names the entity,
``strategy`` says how a change is seen (``timestamp``: a newer ``updated_at``; ``check``: a
change of ``check_cols``), ``hard_deletes`` what a key that left the input becomes (``ignore``,
``invalidate``: its open version is closed, ``new_record``: a deletion record is added).
``snapshot_meta_column_names`` renames the ``dbt_*`` columns. The rules below need only the
config; those that need the model's columns are the compiler's (``compiler/snapshot``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from lakewide.project.config.keys import TABLE_KEYS, _Keys
from lakewide.project.config.kinds import ModelKind
from lakewide.project.config.specs import RuleError, as_list

META_COLUMNS = ("dbt_valid_from", "dbt_valid_to", "dbt_scd_id", "dbt_updated_at", "dbt_is_deleted")
STRATEGIES = ("timestamp", "check")
HARD_DELETES = ("ignore", "invalidate", "new_record")
SNAPSHOT_KEYS = (
    "unique_key",
    "strategy",
    "updated_at",
    "check_cols",
    "hard_deletes",
    "snapshot_meta_column_names",
)


class SnapshotConfig(_Keys):
    """A snapshot model: the type-2 history of its input (one SELECT over a source or model)."""

    merge_engine: None = None
    unique_key: list[str] = []
    strategy: Literal["timestamp", "check"] | None = None
    updated_at: str | None = None
    check_cols: list[str] | Literal["all"] = []
    hard_deletes: Literal["ignore", "invalidate", "new_record"] = "ignore"
    snapshot_meta_column_names: dict[str, str] = {}

    @field_validator("unique_key", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> list[str]:
        return as_list(value)

    @field_validator("check_cols", mode="before")
    @classmethod
    def _checked(cls, value: Any) -> list[str] | str:
        return "all" if value == "all" else as_list(value)

    def rules(self) -> None:
        """dbt's rules: a key, a strategy and what it needs; known meta column names."""
        for key, field in type(self).model_fields.items():
            if key not in (*TABLE_KEYS, *SNAPSHOT_KEYS) and getattr(self, key) != field.default:
                raise RuleError(
                    key, f"{key} does not apply to materialized='snapshot'", compile_error=False
                )
        if self.primary_key:
            raise RuleError(
                "primary_key",
                "a snapshot names its key with unique_key (dbt's name), not primary_key",
                compile_error=False,
            )
        if not self.unique_key:
            raise RuleError(
                "unique_key",
                "materialized='snapshot' needs unique_key (a column or a list of columns)",
                compile_error=False,
            )
        if self.strategy is None:
            raise RuleError(
                "strategy",
                "materialized='snapshot' needs strategy: 'timestamp' (with updated_at) or "
                "'check' (with check_cols)",
                compile_error=False,
            )
        if self.strategy == "timestamp" and not self.updated_at:
            raise RuleError(
                "updated_at",
                "strategy='timestamp' needs updated_at (the column holding each row's change time)",
                compile_error=False,
            )
        if self.strategy == "check" and not self.check_cols:
            raise RuleError(
                "check_cols",
                "strategy='check' needs check_cols: 'all' or a list of columns",
                compile_error=False,
            )
        if self.strategy == "timestamp" and self.check_cols:
            raise RuleError(
                "check_cols", "check_cols applies to strategy='check'", compile_error=False
            )
        for name in self.snapshot_meta_column_names:
            if name not in META_COLUMNS:
                raise RuleError(
                    f"snapshot_meta_column_names.{name}",
                    f"unknown meta column {name!r}; expected one of {', '.join(META_COLUMNS)}",
                    compile_error=False,
                )

    def meta(self, name: str) -> str:
        """The name a ``dbt_*`` meta column has in this snapshot's table."""
        return self.snapshot_meta_column_names.get(name, name)

    def temporal_columns(self) -> tuple[str, str, str | None]:
        """What a temporal join reads: valid_from, valid_to and (new_record) is_deleted."""
        deleted = self.meta("dbt_is_deleted") if self.hard_deletes == "new_record" else None
        return self.meta("dbt_valid_from"), self.meta("dbt_valid_to"), deleted

    @property
    def kind(self) -> ModelKind:
        return ModelKind.SNAPSHOT

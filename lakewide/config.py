"""Model configuration: the keys of ``{{ config(...) }}`` and their validation."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lakewide.errors import ConfigError

MergeEngine = Literal["partial_update", "aggregation", "deduplicate", "first_row"]
Materialized = Literal["view", "table", "incremental", "primary_key"]
WriteMode = Literal["copy-on-write", "merge-on-read"]


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError("expected a column name or a list of column names")


class ModelConfig(BaseModel):
    """Everything a model may set in ``config()`` (names are public interface)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    materialized: Materialized | None = None
    merge_engine: MergeEngine | None = None
    primary_key: list[str] = []
    sequence_field: list[str] = []
    sequence_groups: dict[str, list[str]] = {}
    aggregates: dict[str, Any] = {}
    default_aggregate: str | None = None
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

    @field_validator("primary_key", "sequence_field", "partition_by", "sort_by", "tags",
                     "remove_record_on_sequence_group", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> list[str]:
        return _as_list(value)

    @field_validator("sequence_groups", mode="before")
    @classmethod
    def _groups(cls, value: Any) -> dict[str, list[str]]:
        if not isinstance(value, dict):
            raise ValueError("expected a mapping like {'g_1': ['a', 'b']}")
        return {str(k): _as_list(v) for k, v in value.items()}

    @field_validator("table_properties", mode="before")
    @classmethod
    def _props(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ValueError("expected a mapping of property name -> value")
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}

    @property
    def kind(self) -> str:
        """The effective materialization: ``primary_key`` whenever a merge engine is set."""
        if self.merge_engine is not None:
            return "primary_key"
        return self.materialized or "table"

    @property
    def schema(self) -> str | None:
        return self.schema_


_ALIASES = {"schema": "schema_"}
ACCEPTED_KEYS = sorted(
    ("schema" if name == "schema_" else name) for name in ModelConfig.model_fields
)


def _key_of(loc: tuple[Any, ...]) -> str:
    key = str(loc[0]) if loc else ""
    return "schema" if key == "schema_" else key


def parse_model_config(raw: dict[str, Any], *, path: Path | str, line: int | None = None,
                       model: str | None = None) -> ModelConfig:
    """Validate the keyword arguments a model passed to ``config()``.

    Unknown keys suggest the nearest accepted key; wrong values name the key and what is accepted.
    """
    for key in raw:
        if key not in ACCEPTED_KEYS:
            near = difflib.get_close_matches(key, ACCEPTED_KEYS, n=1)
            hint = f" Did you mean '{near[0]}'?" if near else ""
            raise ConfigError(
                f"unknown config key '{key}'.{hint} Accepted keys: {', '.join(ACCEPTED_KEYS)}",
                path=path, line=line, model=model, key=key)
    data = {_ALIASES.get(k, k): v for k, v in raw.items()}
    try:
        config = ModelConfig(**data)
    except ValidationError as err:
        first = err.errors()[0]
        key = _key_of(first["loc"])
        raise ConfigError(f"invalid value {raw.get(key)!r}: {first['msg']}",
                          path=path, line=line, model=model, key=key) from None
    if config.materialized == "primary_key" and config.merge_engine is None:
        raise ConfigError("materialized='primary_key' needs a merge_engine (expected one of "
                          "partial_update, aggregation, deduplicate, first_row)",
                          path=path, line=line, model=model, key="merge_engine")
    if config.merge_engine is not None and not config.primary_key:
        raise ConfigError(f"merge_engine='{config.merge_engine}' needs primary_key "
                          "(a column name or a list of column names)",
                          path=path, line=line, model=model, key="primary_key")
    if config.merge_engine is not None and config.materialized in ("view", "table", "incremental"):
        raise ConfigError(f"materialized='{config.materialized}' conflicts with merge_engine; "
                          "drop materialized (a merge engine implies a primary-key table)",
                          path=path, line=line, model=model, key="materialized")
    if config.changelog_producer == "lookup" and config.merge_engine is None:
        raise ConfigError("changelog_producer='lookup' needs a merge_engine (a table or view "
                          "model is rebuilt, not merged: it has no row changes to keep)",
                          path=path, line=line, model=model, key="changelog_producer")
    return config

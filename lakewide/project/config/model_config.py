"""Model configuration: the keys of ``{{ config(...) }}``, typed per merge engine, and their rules.

``parse_model_config`` picks the model class by ``merge_engine`` (a table or view has none),
rejects unknown keys and keys the engine does not take, and checks the rules that need only
the config (Paimon's, listed in
docs/concepts/merge-engines.md#validation-compile-errors-paimons-rules) as model validators.
Rules that need the model's columns are the compiler's (``lakewide.compiler.plans.validate``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from pydantic import (
    Discriminator,
    Tag,
    TypeAdapter,
    ValidationError,
)

from lakewide.project.config.engines.aggregation import AggregationConfig
from lakewide.project.config.engines.base import ENGINE_NAMES
from lakewide.project.config.engines.deduplicate import DeduplicateConfig
from lakewide.project.config.engines.first_row import FirstRowConfig
from lakewide.project.config.engines.partial_update import PartialUpdateConfig
from lakewide.project.config.keys import KeyTableConfig, TableConfig
from lakewide.project.config.snapshot import SNAPSHOT_KEYS, SnapshotConfig
from lakewide.project.config.specs import (
    DELETE_POLICIES,
    POLICY_CHOICES,
    AggregateSpec,
    RuleError,
    SequenceGroup,
    unknown_key,
)
from lakewide.vocabulary.errors import CompileError, ConfigError

__all__ = [
    "ACCEPTED_KEYS",
    "DELETE_POLICIES",
    "ENGINE_NAMES",
    "POLICY_CHOICES",
    "AggregateSpec",
    "AggregationConfig",
    "DeduplicateConfig",
    "FirstRowConfig",
    "KeyTableConfig",
    "ModelConfig",
    "PartialUpdateConfig",
    "SequenceGroup",
    "SnapshotConfig",
    "TableConfig",
    "parse_model_config",
]


def _engine_of(value: Any) -> str:
    engine = value.get("merge_engine") if isinstance(value, dict) else value.merge_engine
    materialized = value.get("materialized") if isinstance(value, dict) else value.materialized
    if engine is None and materialized == "snapshot":
        return "snapshot"
    return str(engine) if engine is not None else "table"


ModelConfig = Annotated[
    Annotated[TableConfig, Tag("table")]
    | Annotated[PartialUpdateConfig, Tag(PartialUpdateConfig.engine.name)]
    | Annotated[AggregationConfig, Tag(AggregationConfig.engine.name)]
    | Annotated[DeduplicateConfig, Tag(DeduplicateConfig.engine.name)]
    | Annotated[FirstRowConfig, Tag(FirstRowConfig.engine.name)]
    | Annotated[SnapshotConfig, Tag("snapshot")],
    Discriminator(_engine_of),
]
_ADAPTER: TypeAdapter[ModelConfig] = TypeAdapter(ModelConfig)

_ALIASES = {"schema": "schema_"}
ACCEPTED_KEYS = sorted(
    {
        "schema" if name == "schema_" else name
        for name in [*PartialUpdateConfig.model_fields, *SnapshotConfig.model_fields]
    }
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
    if engine is not None and engine not in ENGINE_NAMES:
        raise ConfigError(
            f"invalid value {engine!r}: expected one of {', '.join(ENGINE_NAMES)}",
            key="merge_engine",
            **where,
        )
    misplaced = [k for k in raw if k in SNAPSHOT_KEYS and raw.get("materialized") != "snapshot"]
    if misplaced:
        raise ConfigError(
            f"{misplaced[0]} applies to materialized='snapshot' models", key=misplaced[0], **where
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

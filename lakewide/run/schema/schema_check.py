"""Before a run writes anything: every selected key table's schema changes planned, said, and
refused (exit 2) where only a rebuild makes the table right (lakewide.run.schema.schema_steps)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from lakewide.compiler.plans.upstream import compile_in
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.run.schema.contract_inputs import model_digest
from lakewide.run.schema.schema_steps import ModelSchema, SchemaChangeRefused, model_schema
from lakewide.state.definition import (
    definition_changed,
    definition_digest,
    refuse_changed_models,
)
from lakewide.state.metadata import CorruptMetadataError
from lakewide.state.offsets import DEFINITION, OFFSETS, VERSION, TableMeta
from lakewide.vocabulary.errors import LakewideError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


def check_schemas(
    manifest: Manifest,
    names: list[str],
    adapter: SparkAdapter,
    on_schema: Callable[[ModelSchema], None],
) -> list[ModelSchema]:
    """The schema of each selected key table with a table; ``on_schema`` gets each one with
    changes to apply (not a refused one).

    Raises SchemaChangeRefused naming every refused change, or DefinitionChangedError for a
    changed model whose table was built before contracts were stored. A model that does not
    compile, or whose upstream cannot be analysed yet (a model this run builds first), is
    left to its own run, which plans again before writing.
    """
    found: list[ModelSchema] = []
    legacy: list[str] = []
    for name in names:
        node = manifest.models[name]
        if not node.config.kind.is_key_table:
            continue
        try:
            if not adapter.table_exists(node.relation):
                continue
            compiled = compile_in(manifest, node)
            assert compiled.model is not None and isinstance(compiled.bootstrap, exp.Create)
            query = compiled.bootstrap.expression
            definition = definition_digest(node)  # the digest's and the contract's
            schema = model_schema(
                adapter,
                compiled.model,
                query,
                manifest.project.relative(node.path),
                digest=model_digest(adapter, compiled, definition=definition),
                definition=definition,
            )
        except (LakewideError, CorruptMetadataError):
            continue
        if schema.plan is None:
            if definition_changed(node, readable_meta(adapter, node.relation)):
                legacy.append(name)
            continue
        found.append(schema)
        if schema.plan.notes and not schema.plan.refusals:  # refusals: the error says them
            on_schema(schema)
    if legacy:
        refuse_changed_models(manifest, legacy, lambda r: readable_meta(adapter, r))
    refused = [s for s in found if s.plan is not None and s.plan.refusals]
    if refused:
        raise SchemaChangeRefused(refused)
    return found


def readable_meta(adapter: SparkAdapter, relation: Relation) -> TableMeta | None:
    """A table's last lakewide commit and the snapshots after it, as the definition check needs;
    None when the table is missing or unreadable (the model's own run reports that)."""
    try:
        return adapter.last_commit_meta(relation, OFFSETS, (DEFINITION, VERSION))
    except CorruptMetadataError:
        return None

"""``lakewide show``: a model's rows as a table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from sqlglot import exp

from lakewide.commands.context import Options, model_named, pass_options, profile_options
from lakewide.commands.session import with_adapter
from lakewide.commands.tables import print_table, rows_table
from lakewide.config import SnapshotConfig
from lakewide.errors import ModelRunError, UsageError
from lakewide.manifest import Manifest
from lakewide.nodes import ModelNode

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@click.command()
@click.argument("model")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=0))
@profile_options
@pass_options
def show(options: Options, model: str, limit: int) -> None:
    """Print a model's rows as a table (ordered by primary key)."""

    def check(manifest: Manifest) -> None:
        model_named(manifest, model)

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        node = manifest.models[model]
        _ensure_showable(manifest, node, adapter)
        order = node.config.primary_key or []
        if isinstance(node.config, SnapshotConfig):  # each key's versions in time order
            order = [*node.config.unique_key, node.config.meta("dbt_valid_from")]
        query = exp.select("*").from_(node.relation.table())
        if order:
            query = query.order_by(*(exp.column(c) for c in order))
        columns, rows = adapter.rows(query.limit(limit))
        # lakewide's own columns (stored versions, row counts: README "Run boundaries") hidden
        shown = [i for i, c in enumerate(columns) if not c.startswith("__lw_")]
        print_table(rows_table([columns[i] for i in shown], [[r[i] for i in shown] for r in rows]))
        return 0

    with_adapter(options, body, check=check, writes=False)


def _ensure_showable(manifest: Manifest, node: ModelNode, adapter: SparkAdapter) -> None:
    """A session view (hadoop catalog) is created for this session; a table must exist."""
    from lakewide.executor import run_models

    if node.config.kind == "view" and not node.relation.catalog:
        failed = [r for r in run_models(manifest, [node.name], adapter) if r.status != "success"]
        if failed and "TABLE_OR_VIEW_NOT_FOUND" in failed[0].message:
            raise UsageError(
                f"{failed[0].message}; build what view {node.name} reads first "
                f"with `lakewide run -s +{node.name}`"
            )
        if failed:  # the view itself is wrong: a failed model
            raise ModelRunError(failed[0].message)
        return
    if not adapter.table_exists(node.relation):
        raise UsageError(
            f"{node.relation} does not exist yet (never built); run "
            f"`lakewide run -s {node.name}` (or `lakewide build`) first",
            model=node.name,
        )

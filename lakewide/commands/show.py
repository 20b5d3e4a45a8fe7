"""``lakewide show``: a model's rows as a table, or an inline query's (``--inline``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.commands.output.tables import print_table, rows_table
from lakewide.commands.services.context import Options, model_named, pass_options, profile_options
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.config.model_config import SnapshotConfig
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.vocabulary import events
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ModelRunError, UsageError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@click.command()
@click.argument("model", required=False)
@click.option(
    "--inline",
    help="A SELECT to run instead of a model (ref() and source() allowed), as dbt show --inline.",
)
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=0))
@profile_options
@pass_options
def show(options: Options, model: str | None, inline: str | None, limit: int) -> None:
    """Print a model's rows as a table (ordered by primary key), or the rows of an --inline
    query over any table."""
    if (model is None) == (inline is None):
        raise UsageError(
            'give a MODEL or --inline "select ..." (one of the two): '
            'lakewide show orders_wide, lakewide show --inline "select * from lw.ods.orders"'
        )
    queries: list[exp.Query] = []

    def check(manifest: Manifest) -> None:
        if inline is not None:
            queries.append(inline_query(manifest, options, inline))
        else:
            model_named(manifest, str(model))

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        if inline is not None:
            query = queries[0]
            if query.args.get("limit"):  # its own limit, then --limit over it
                query = exp.select("*").from_(query.subquery("__lw_inline"))
            limited = cast(exp.Expression, query.limit(limit))
            try:
                columns, rows = adapter.rows(limited)
            except ModelRunError as err:
                raise UsageError(f"--inline query failed: {err.message}") from None
            _print(columns, rows)
            return 0
        node = manifest.models[str(model)]
        _ensure_showable(manifest, node, adapter)
        order = _order(node)
        select = exp.select("*").from_(node.relation.table())
        if order:
            select = select.order_by(*(exp.column(c) for c in order))
        _print(*adapter.rows(select.limit(limit)))
        return 0

    if model is not None and _shown_without_spark(options, str(model), limit):
        return
    with_adapter(options, body, check=check, writes=False)


def _order(node: ModelNode) -> list[str]:
    """The order rows are shown in: the primary key; a snapshot's keys, then each key's
    versions in time order."""
    if isinstance(node.config, SnapshotConfig):
        return [*node.config.unique_key, node.config.meta("dbt_valid_from")]
    return list(node.config.primary_key or [])


def _shown_without_spark(options: Options, model: str, limit: int) -> bool:
    """Print a table model's rows read with pyiceberg (no JVM), where the catalog allows it;
    False (with a line saying why) where Spark has to read them."""
    from lakewide.state.table_rows import Missing, NotReadable, read_rows

    manifest = options.manifest()
    node = model_named(manifest, model)
    if node.config.kind.is_view:
        return False
    try:
        columns, rows = read_rows(manifest.output, node.relation, _order(node), limit)
    except Missing:
        raise UsageError(_never_built(node), model=node.name) from None
    except NotReadable as err:
        events.emit("StepStart", f"reading {node.relation} through Spark ({err})")
        return False
    _print(columns, rows)
    return True


def _never_built(node: ModelNode) -> str:
    return (
        f"{node.relation} does not exist yet (never built); run "
        f"`lakewide run -s {node.name}` (or `lakewide build`) first"
    )


def _print(columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    """The rows as a plain table; lakewide's own columns (stored versions, row counts:
    docs/concepts/run-boundaries.md) hidden."""
    shown = [i for i, c in enumerate(columns) if not c.startswith("__lw_")]
    print_table(rows_table([columns[i] for i in shown], [[r[i] for i in shown] for r in rows]))


def inline_query(manifest: Manifest, options: Options, text: str) -> exp.Query:
    """``--inline``'s text rendered (``ref()``, ``source()``, ``var()``, the project's macros)
    and parsed as one query; a UsageError when it is not one."""
    from lakewide.project.render import Renderer

    project = manifest.project
    macros = sorted(p for f in project.macro_paths if f.is_dir() for p in f.rglob("*.sql"))
    renderer = Renderer(macros, {**project.vars, **options.variables}, manifest.sources)
    rendered = renderer.render(
        Path("--inline"),
        text,
        resolve_ref=lambda name: model_named(manifest, name).relation,
        this=Relation(manifest.output.catalog, manifest.output.namespace, "inline"),
    )
    try:
        query = sqlglot.parse_one(rendered.sql, read=DIALECT)
    except ParseError as err:
        raise UsageError(f"--inline does not parse: {str(err).splitlines()[0]}") from None
    if not isinstance(query, exp.Query):
        raise UsageError("--inline takes one query (select ...), which lakewide only reads")
    return query


def _ensure_showable(manifest: Manifest, node: ModelNode, adapter: SparkAdapter) -> None:
    """A session view (hadoop catalog) is created for this session; a table must exist."""
    from lakewide.run.models.executor import run_models

    if node.config.kind.is_view and not node.relation.catalog:
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
        raise UsageError(_never_built(node), model=node.name)

"""``lakewide diff MODEL``: row and column differences of one model between two targets or two
snapshots (SQLMesh's table_diff), keyed by its primary key or ``--key``.

Exit 0 when the sides are equal, 1 when they differ (as ``diff`` and ``git diff --exit-code``),
2 for a usage error.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click
from sqlglot import exp

from lakewide.commands.output.diff_report import DiffOutcome, show
from lakewide.commands.output.output import output_options
from lakewide.commands.services.context import Options, model_named, pass_options
from lakewide.commands.services.spark_start import with_adapter
from lakewide.compiler.queries.table_diff import COUNT_NAMES, DiffQuery, duplicate_keys
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.vocabulary.errors import UsageError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter

VIEWS = ("__lw_diff_a", "__lw_diff_b")
SIDES_HELP = (
    "diff compares two sides: give --target twice (a then b), --target once (the default "
    "target against it), --snapshot twice (two snapshots of one target), one --snapshot (that "
    "snapshot against the current table), or two targets each with a --snapshot"
)


@dataclass(frozen=True)
class Side:
    target: str | None
    snapshot: str | None

    @property
    def label(self) -> str:
        where = self.target or "default target"
        return f"{where}@{self.snapshot}" if self.snapshot else where


def sides(targets: tuple[str, ...], snapshots: tuple[str, ...], default: str | None) -> list[Side]:
    """The two sides the options name; a UsageError for any other combination."""
    if len(targets) == 1 and not snapshots:  # the default (or global) target against it
        return [Side(default, None), Side(targets[0], None)]
    names: list[str | None] = [*targets] or [default]
    if len(names) == 2 and len(snapshots) in (0, 2):
        return [Side(names[i], snapshots[i] if snapshots else None) for i in (0, 1)]
    if len(names) == 1 and len(snapshots) == 2:
        return [Side(names[0], snapshots[0]), Side(names[0], snapshots[1])]
    if len(names) == 1 and len(snapshots) == 1:
        return [Side(names[0], snapshots[0]), Side(names[0], None)]
    raise UsageError(SIDES_HELP)


def _relation(manifest: Manifest, model: str, side: Side) -> Relation:
    relation = model_named(manifest, model).relation
    if not relation.catalog:
        raise UsageError(
            f"{model} is a session view (materialized='view' on a hadoop catalog): "
            "diff compares stored tables"
        )
    return relation


def _second_catalog(adapter: SparkAdapter, first: Manifest, second: Manifest) -> str:
    """The Spark catalog name side b is read through: the first's when both outputs name the
    same catalog, else b's own name, or ``<name>_b`` when that name is taken by another one."""
    a, b = first.output, second.output
    same = a.catalog == b.catalog
    if same and a.iceberg_catalog_properties() == b.iceberg_catalog_properties():
        return a.catalog
    name = f"{b.catalog}_b" if same else b.catalog
    adapter.add_catalog(name, b.iceberg_catalog_properties())
    return name


def _columns(adapter: SparkAdapter, view: str) -> list[str]:
    types = adapter.column_types(exp.select("*").from_(view))
    return [c for c in types if not c.startswith("__lw_")]


def _count(adapter: SparkAdapter, query: exp.Expression) -> int:
    _, [row] = adapter.rows(query)
    return int(row[0] or 0)


@click.command()
@click.argument("model")
@click.option(
    "--target",
    "-t",
    "targets",
    multiple=True,
    help="A target to compare; twice: side a, then b; once: the default target against it.",
)
@click.option(
    "--snapshot",
    "snapshots",
    multiple=True,
    help="Snapshot id or tag; twice: a then b; once: against the current table.",
)
@click.option(
    "--key", "keys", multiple=True, help="Columns identifying a row (default: the primary key)."
)
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(min=0),
    help="Sample rows shown per kind of difference.",
)
@output_options
@pass_options
def diff(
    options: Options,
    model: str,
    targets: tuple[str, ...],
    snapshots: tuple[str, ...],
    keys: tuple[str, ...],
    limit: int,
) -> None:
    """Row and column differences of MODEL between two targets or two snapshots: exit 0 when
    equal, 1 when different."""
    a, b = sides(targets, snapshots, options.target)
    options_a = dataclasses.replace(options, target=a.target)
    manifest_b = dataclasses.replace(options, target=b.target).manifest()
    _relation(manifest_b, model, b)

    def body(manifest_a: Manifest, root: SparkAdapter) -> int:
        adapter = root.isolated()  # b's catalog and the views stay in this session
        relation_a = _relation(manifest_a, model, a)
        relation_b = _relation(manifest_b, model, b)
        relation_b = dataclasses.replace(
            relation_b, catalog=_second_catalog(adapter, manifest_a, manifest_b)
        )
        for side, relation, view in ((a, relation_a, VIEWS[0]), (b, relation_b, VIEWS[1])):
            if not adapter.table_exists(relation):
                raise UsageError(f"{model} has no table {relation} in {side.label}: build it first")
            adapter.register_version(view, relation, side.snapshot)
        key = list(keys) or list(model_named(manifest_a, model).config.primary_key)
        if not key:
            raise UsageError(f"{model} has no primary_key: give the columns of a row with --key")
        columns = [_columns(adapter, view) for view in VIEWS]
        for side, names in zip((a, b), columns):
            missing = [k for k in key if k not in names]
            if missing:
                raise UsageError(
                    f"key column {missing[0]} is not a column of {model} in {side.label}; "
                    f"columns: {', '.join(names)}"
                )
        for side, view in zip((a, b), VIEWS):
            repeated = _count(adapter, duplicate_keys(view, key))
            if repeated:
                raise UsageError(
                    f"the key ({', '.join(key)}) is not unique in {side.label}: {repeated} key "
                    "value(s) repeat; give columns that identify a row with --key"
                )
        compared = [c for c in columns[0] if c in columns[1] and c not in key]
        query = DiffQuery(VIEWS[0], VIEWS[1], key, compared)
        _, [row] = adapter.rows(query.stats())
        counts = dict(zip([*COUNT_NAMES, *compared], (int(v or 0) for v in row)))
        outcome = DiffOutcome(
            model,
            a.label,
            b.label,
            key,
            counts,
            compared,
            [c for c in columns[0] if c not in columns[1]],
            [c for c in columns[1] if c not in columns[0]],
        )
        differing = [c for c in compared if counts[c]]
        samples = {
            "only_a": adapter.rows(query.sample_only("a", limit)) if counts["only_a"] else None,
            "only_b": adapter.rows(query.sample_only("b", limit)) if counts["only_b"] else None,
            "differing": adapter.rows(query.sample_differing(differing, limit))
            if differing
            else None,
        }
        show(outcome, samples if limit else {})
        return 0 if outcome.equal else 1

    with_adapter(options_a, body, writes=False)

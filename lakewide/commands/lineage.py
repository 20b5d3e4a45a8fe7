"""``lakewide lineage``: which upstream snapshots each of a model's snapshots was built from;
``--consistent A B``: the newest snapshot pair of two models built from the same upstream
snapshots (lakewide.state.consistency)."""

from __future__ import annotations

import datetime
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click
from rich.markup import escape
from rich.table import Table

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, model_named, pass_options, profile_options
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.errors import ConfigError


@contextmanager
def metadata(output: Output) -> Iterator[Callable[[Relation], TableMeta | None]]:
    """Reads table metadata: without a JVM where the catalog has a reader, else through Spark."""
    from lakewide.state.readers import metadata_reader

    reader = metadata_reader(output)
    if reader is not None:
        yield reader.table_meta
        return
    from lakewide.spark.adapter import SparkAdapter

    adapter = SparkAdapter(output, "lakewide-lineage")
    try:
        yield adapter.table_meta
    finally:
        adapter.stop()


@click.command()
@click.argument("model", required=False)
@click.option(
    "--consistent",
    nargs=2,
    metavar="A B",
    help="The newest snapshots of models A and B built from the same upstream snapshots.",
)
@profile_options
@pass_options
def lineage(options: Options, model: str | None, consistent: tuple[str, str] | None) -> None:
    """Which upstream snapshots each of MODEL's snapshots was built from."""
    if (model is None) == (consistent is None):
        raise click.UsageError("give a MODEL, or --consistent A B (not both)")
    manifest = options.manifest()
    if consistent is not None:
        consistent_pair(manifest, *consistent)
        return
    assert model is not None
    _history(manifest, model)


def _history(manifest: Manifest, model: str) -> None:
    from lakewide.state.offsets import RUN_ID, last_commit, offset_relation, snapshot_offsets

    node = model_named(manifest, model)
    with metadata(manifest.output) as table_meta:
        meta = table_meta(node.relation)
    if meta is None or last_commit(meta) is None:
        console.print(f"{node.relation}: no lakewide commits yet")
        return
    table = Table(title=f"lineage of {node.relation} (newest first)")
    for column in ("snapshot", "committed (UTC)", "operation", "run", "built from"):
        table.add_column(column)
    for snap in meta.ancestors():
        offsets = snapshot_offsets(snap)
        if offsets is None:
            continue
        upstream = "\n".join(
            f"{offset_relation(key)} @ {value}" for key, value in sorted(offsets.items())
        )
        when = datetime.datetime.fromtimestamp(snap.timestamp_ms / 1000, datetime.timezone.utc)
        table.add_row(
            str(snap.id),
            when.strftime("%Y-%m-%d %H:%M:%S"),
            snap.operation,
            snap.summary.get(RUN_ID, "")[:12],
            upstream,
        )
    console.print(table)


def consistent_pair(manifest: Manifest, a: str, b: str) -> None:
    """Print the newest consistent pair of ``a`` and ``b`` and the SQL reading it; a
    ConfigError (exit 2) saying why when there is none."""
    from lakewide.state.consistency import newest_pair, pair_sql, tags_of
    from lakewide.state.tags import model_lineages, tables

    nodes = [model_named(manifest, name) for name in (a, b)]
    keys = [n.relation.key for n in nodes]
    for node, key in zip(nodes, keys):
        if key not in tables(manifest):
            raise ConfigError(f"model {node.name} is a {node.config.kind}: it has no snapshots")
    with metadata(manifest.output) as table_meta:
        lineages = model_lineages(manifest, table_meta)
        pair = newest_pair(lineages, *keys)
    if isinstance(pair, str):
        console.print(f"No consistent snapshots of {a} and {b}: {escape(pair)}")
        sys.exit(1)
    for node, key, snapshot in zip(nodes, keys, (pair.a, pair.b)):
        tags = tags_of(lineages.meta(key), snapshot.id)
        tagged = f" (tags: {', '.join(tags)})" if tags else ""
        console.print(f"{node.name}: {node.relation} snapshot {snapshot.id}{tagged}")
    shared = lineages.of(keys[0], pair.a.id)
    upstream = [f"{r} @ {', '.join(map(str, sorted(shared[r], key=str)))}" for r in pair.shared]
    console.print("built from the same snapshots of: " + "; ".join(upstream))
    sql = pair_sql(nodes[0], pair.a.id, nodes[1], pair.b.id)
    console.print(escape(sql), soft_wrap=True)

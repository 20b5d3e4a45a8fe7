"""``lakewide lineage``: which upstream snapshots each of a model's snapshots was built from."""

from __future__ import annotations

import datetime

import click
from rich.table import Table

from lakewide.commands.context import Options, console, model_named, pass_options, profile_options


@click.command()
@click.argument("model")
@profile_options
@pass_options
def lineage(options: Options, model: str) -> None:
    """Which upstream snapshots each of MODEL's snapshots was built from."""
    from lakewide.metadata import metadata_reader
    from lakewide.offsets import RUN_ID, last_commit, offset_relation, snapshot_offsets

    manifest = options.manifest()
    node = model_named(manifest, model)
    output = manifest.output
    reader = metadata_reader(output)
    if reader is not None:
        meta = reader.table_meta(node.relation)
    else:
        from lakewide.spark.adapter import SparkAdapter

        adapter = SparkAdapter(output, "lakewide-lineage")
        try:
            meta = adapter.table_meta(node.relation)
        finally:
            adapter.stop()
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

"""``lakewide load``: a CSV, Parquet or JSON file appended to a source table as one commit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, pass_options, profile_options
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.vocabulary.errors import UsageError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter

FORMATS = ("csv", "parquet", "json")
SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "json"}


def source_table(manifest: Manifest, name: str) -> Relation:
    """The declared source ``name`` names (``source.table`` as in ``source('source',
    'table')``, or its table's full name); a UsageError listing the sources otherwise. A seed's
    table is refused: its CSV is its truth (the next ``lakewide seed`` would overwrite it)."""
    from lakewide.project.seeds import find_seeds

    found = [
        s.relation
        for (source, table), s in manifest.sources.items()
        if name in (f"{source}.{table}", str(s.relation))
    ]
    if not found:
        known = ", ".join(f"{s}.{t}" for s, t in sorted(manifest.sources)) or "none declared"
        raise UsageError(
            f"'{name}' is not a declared source table; accepted: source.table as declared in "
            f"models/*.yml ({known}) or its full table name"
        )
    seeds = {str(s.relation): s for s in find_seeds(manifest.project, manifest.output)}
    if str(found[0]) in seeds:
        seed = manifest.project.relative(seeds[str(found[0])].path)
        raise UsageError(
            f"{found[0]} is the table of seed {seed}: append the rows to that CSV and run "
            "`lakewide seed` (an append to the CSV is appended to the table)"
        )
    return found[0]


def file_format(path: Path, given: str | None) -> str:
    """``--format``, else the file's suffix; a UsageError when neither says."""
    if not path.is_file():
        raise UsageError(f"no file {path}; give a CSV, Parquet or JSON file to append")
    found = given or SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise UsageError(
            f"cannot tell the format of {path.name} from its suffix; accepted: --format "
            f"{'|'.join(FORMATS)}, or a file ending in {', '.join(SUFFIXES)}"
        )
    return found


@click.command()
@click.argument("table")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    help="The file's format (default: from its suffix: .csv, .parquet, .json, .jsonl).",
)
@profile_options
@pass_options
def load(options: Options, table: str, file: Path, format_: str | None) -> None:
    """Append a CSV, Parquet or JSON file to a source table as one commit (its columns must be
    the table's; values are checked against the table's types before anything is written)."""
    chosen: list[tuple[Relation, str]] = []

    def check(manifest: Manifest) -> None:
        chosen.append((source_table(manifest, table), file_format(file, format_)))

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        relation, fmt = chosen[0]
        if not adapter.table_exists(relation):
            raise UsageError(
                f"{relation} does not exist yet: lakewide appends to existing tables (create "
                "it with its writer, or as a seed)"
            )
        rows = adapter.append_file(file.resolve(), relation, fmt)
        snapshot = adapter.current_snapshot(relation)
        console.print(f"load {file.name}: +{rows} rows appended -> {relation}")
        console.print(f"     one commit: snapshot {snapshot}")
        return 0

    with_adapter(options, body, check=check)

"""``lakewide branch list|drop``: the environments' Iceberg branches of the model tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from lakewide.commands.output.console import console
from lakewide.commands.services import context
from lakewide.commands.services.context import Options
from lakewide.commands.services.spark_start import with_adapter
from lakewide.compiler.statements.build_changes import changelog_relation
from lakewide.project.branch_name import MAIN, is_stage, stage_branch
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.state.branches import branch_state
from lakewide.state.contract_store import ContractStore
from lakewide.state.offsets import TableMeta

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@click.group()
def branch() -> None:
    """The Iceberg branches of the model tables (environments: run --branch, publish)."""


def _tables(manifest: Manifest, names: list[str]) -> list[tuple[str, Relation]]:
    """Each model's table and its changelog table (the tables a branch run writes)."""
    return [
        (name, table)
        for name in names
        for table in (
            manifest.models[name].relation,
            changelog_relation(manifest.models[name].relation),
        )
    ]


def _list(
    manifest: Manifest, names: list[str], meta_of: Callable[[Relation], TableMeta | None]
) -> int:
    shown = 0
    for name, table in _tables(manifest, names):
        meta = meta_of(table)
        if meta is None:
            continue
        for branch_name in sorted(b for b in meta.branches if b != MAIN and not is_stage(b)):
            state = branch_state(meta, branch_name)
            where = (
                f"{state.ahead} snapshot(s) ahead of main"
                if state.forwardable
                else "main moved since: cannot be published"
            )
            console.print(
                f"{branch_name:<20} {name:<24} {table}  head {state.head}  {where}",
                markup=False,
                highlight=False,
            )
            shown += 1
    if not shown:
        console.print("No branches on the selected models' tables.")
    return 0


@branch.command(name="list")
@context.selection
@context.profile_options
@context.pass_options
def list_(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Per model table: its branches, their heads, and how far each is ahead of main. Reads
    table metadata without a JVM where the catalog allows it."""
    from lakewide.state.readers import catalog_reader

    manifest = options.manifest()
    names = context.selected(manifest, select, exclude)
    reader = catalog_reader(manifest.output)
    if reader is not None:
        raise SystemExit(_list(manifest, names, reader.table_meta))
    with_adapter(options, lambda m, a: _list(m, names, a.table_meta), writes=False)


@branch.command()
@click.argument("name")
@context.selection
@context.profile_options
@context.pass_options
def drop(options: Options, name: str, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Drop branch NAME from every selected model table that has it (main is untouched)."""
    context.checked_branch(name, param_hint="NAME")

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        dropped = 0
        for model, table in _tables(manifest, context.selected(manifest, select, exclude)):
            meta = adapter.table_meta(table)
            if meta is not None and stage_branch(name) in meta.branches:
                adapter.drop_branch(table, stage_branch(name))  # a stopped run's side branch
            if meta is not None and name in meta.branches:
                adapter.drop_branch(table, name)
                ContractStore(adapter).clear(table, name)
                console.print(f"dropped {name} of {table} ({model})", markup=False)
                dropped += 1
        console.print(f"Dropped branch {name} from {dropped} table(s).")
        return 0

    with_adapter(options, body)

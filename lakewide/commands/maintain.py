"""``lakewide maintain``: compaction, snapshot expiry, orphan files, retention and TTL of the
selected models' tables (lakewide.maintenance, lakewide.run.maintenance.maintain)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from lakewide.commands.output import output
from lakewide.commands.output.console import console
from lakewide.commands.services.context import (
    Options,
    pass_options,
    profile_options,
    selected,
    selection,
)
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.run.maintenance.maintain import TableResult
    from lakewide.run.maintenance.maintenance_steps import MetaOf
    from lakewide.spark.adapter import SparkAdapter


def _protected_line(protected: dict[int, str]) -> str:
    if not protected:
        return "no snapshot needed by offsets"
    reasons = sorted({why for whys in protected.values() for why in whys.split("; ")})
    return f"keeps {len(protected)} snapshot(s) needed: {'; '.join(reasons)}"


def _dry_run(manifest: Manifest, names: list[str], meta_of: MetaOf) -> int:
    from lakewide.run.maintenance.maintenance_steps import plan_table
    from lakewide.vocabulary.dialect import to_sql

    now = datetime.now(timezone.utc)
    for name in names:
        plan, protected = plan_table(manifest, name, meta_of, now)
        console.print(f"[bold]{escape(name)}[/bold] {plan.relation}")
        if plan.skipped:
            console.print(f"  skipped: {escape(plan.skipped)}")
            continue
        for step in plan.steps:
            console.print(f"  {escape(to_sql(step.statement, pretty=False))}", soft_wrap=True)
            if step.kind == "expire_snapshots":
                console.print(f"    -- {escape(_protected_line(protected))}")
    console.print(f"Dry run: {len(names)} model(s), nothing changed.")
    return 0


def _report(result: TableResult) -> None:
    colour = {"success": "green", "error": "red", "skipped": "yellow"}[result.status]
    if result.status == "error":  # --quiet keeps errors
        with output.loud():
            console.print(f"[red]ERROR[/red] {escape(result.model)}: {escape(result.message)}")
        return
    console.print(f"[{colour}]{result.status.upper()}[/{colour}] {escape(result.model)}")
    if result.message:
        console.print(f"  {escape(result.message)}")
    for step in result.steps:
        counts = " ".join(f"{k}={v}" for k, v in step.counts.items() if v)
        extra = f" ({escape(step.note)})" if step.note else ""
        if step.snapshot is not None:
            extra += f" snapshot {step.snapshot}"
        if step.kind == "expire_snapshots":
            extra += f"; {escape(_protected_line(result.protected))}"
        console.print(f"  {step.kind}: {counts or 'nothing to do'}{extra}")


def _maintain(manifest: Manifest, adapter: SparkAdapter, names: list[str]) -> int:
    from lakewide.run.maintenance.maintain import maintain_models

    results = maintain_models(manifest, names, adapter, _report)
    failed = sum(r.status == "error" for r in results)
    done = sum(r.status == "success" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    with output.loud():  # --quiet keeps the summary line
        console.print(f"Done. {done} maintained, {failed} failed, {skipped} skipped.")
    return 1 if failed else 0


@click.command()
@selection
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print each table's statements and the snapshots kept; change nothing.",
)
@profile_options
@pass_options
def maintain(
    options: Options, select: tuple[str, ...], exclude: tuple[str, ...], dry_run: bool
) -> None:
    """Compact, expire snapshots (never those offsets need), remove orphan files, apply
    retention and TTL on the selected models' tables."""
    if dry_run:
        from lakewide.state.readers import metadata_reader

        manifest = options.manifest()
        names = selected(manifest, select, exclude)
        reader = metadata_reader(manifest.output)
        if reader is not None:
            raise SystemExit(_dry_run(manifest, names, reader.table_meta))
        with_adapter(
            options,
            lambda m, a: _dry_run(m, selected(m, select, exclude), a.table_meta),
            writes=False,
        )
        return
    with_adapter(
        options,
        lambda m, a: _maintain(m, a, selected(m, select, exclude)),
        check=lambda m: selected(m, select, exclude),
    )

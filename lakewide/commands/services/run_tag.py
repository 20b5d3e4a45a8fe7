"""``--tag NAME``, ``--replace-tag``, ``--no-tag`` of ``run``/``build``: the consistent set of a
run tagged after it (lakewide.state.tags)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from lakewide.commands.output.console import console
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import ConfigError, LakewideError

if TYPE_CHECKING:
    from lakewide.run.models.outcomes import ModelResult
    from lakewide.spark.adapter import SparkAdapter


@dataclass(frozen=True)
class TagRequest:
    """What the command line asked of the run's tag."""

    name: str | None = None  # None: lw-run-<run id>
    replace: bool = False
    off: bool = False


#: the default: ``lw-run-<run id>`` when the run commits (unless the profile says run_tags: false)
AUTO_TAG = TagRequest()


def _tag_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    from lakewide.state.tags import check_tag_name

    if value is None:
        return None
    try:
        return check_tag_name(value)
    except ConfigError as err:
        raise click.BadParameter(err.message) from None


def tag_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--tag NAME``, ``--replace-tag``, ``--no-tag``."""
    func = click.option(
        "--no-tag",
        is_flag=True,
        help="No Iceberg tag after the run (profile key: run_tags: false).",
    )(func)
    func = click.option(
        "--replace-tag",
        is_flag=True,
        help="Move an existing --tag NAME to this run's snapshots (dropped where stale).",
    )(func)
    return click.option(
        "--tag",
        "tag",
        metavar="NAME",
        callback=_tag_name,
        help="Iceberg tag NAME on the run's consistent snapshots (default: lw-run-<run id>).",
    )(func)


def tag_request(tag: str | None, replace_tag: bool, no_tag: bool) -> TagRequest:
    """The request, or a usage error for options that contradict each other."""
    if no_tag and (tag or replace_tag):
        raise click.UsageError("--no-tag cannot go with --tag or --replace-tag")
    if replace_tag and not tag:
        raise click.UsageError("--replace-tag needs --tag NAME (a run's own tag is new)")
    return TagRequest(tag, replace_tag, no_tag)


def refuse_taken(manifest: Manifest, request: TagRequest, adapter: SparkAdapter) -> None:
    """ConfigError before anything runs when the named tag exists and may not be replaced."""
    from lakewide.state.tags import model_lineages, refuse_existing

    if request.name and not request.replace and not request.off:
        refuse_existing(manifest, request.name, model_lineages(manifest, adapter.table_meta))


def tag_run(
    manifest: Manifest,
    adapter: SparkAdapter,
    results: list[ModelResult],
    run_id: str,
    request: TagRequest,
) -> int:
    """Tag the run's consistent set; prints what was tagged and what was not, and why. Returns
    1 when a tag could not be created (the run's data is committed either way)."""
    from lakewide.project.durations import parse_retention
    from lakewide.state.tags import (
        consistent_set,
        create_tag,
        drop_tag,
        model_lineages,
        run_tag_name,
        tagged_tables,
    )

    output = manifest.output
    if request.off or not output.run_tags:
        return 0
    if request.name is None and not any(r.commits for r in results):
        return 0  # nothing committed: the previous run's tag still names these snapshots
    started = time.perf_counter()
    name = request.name or run_tag_name(run_id)
    retention = parse_retention(output.tag_retention)
    lineages = model_lineages(manifest, adapter.table_meta)
    found = consistent_set(manifest, [(r.name, r.status) for r in results], lineages)
    now_ms = int(time.time() * 1000)
    try:
        for model, snapshot in found.tagged.items():
            relation = manifest.models[model].relation
            meta = lineages.meta(relation.key)
            assert meta is not None, "a tagged table has metadata"
            kept = retention.after(now_ms - meta.snapshots[snapshot].timestamp_ms)
            adapter.sql(create_tag(relation, name, snapshot, kept, request.replace))
        if request.replace:  # the tag names one consistent set: drop it where it is stale
            for model in tagged_tables(manifest, name, lineages).keys() - found.tagged.keys():
                adapter.sql(drop_tag(manifest.models[model].relation, name))
    except LakewideError as err:
        console.print(f"[red]Tag {name} not created on every table[/red]: {err.message}")
        return 1
    if found.tagged:
        console.print(
            f"Tagged {len(found.tagged)} table(s) {name} (retained {retention}) in "
            f"{time.perf_counter() - started:.1f}s: {', '.join(found.tagged)}"
        )
    for model, why in found.left.items():
        console.print(f"Not tagged {name}: {model}: {why}")
    return 0

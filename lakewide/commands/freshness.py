"""``lakewide freshness``: each model's lag behind its upstreams against its ``freshness``
target, from Iceberg metadata alone (no JVM; see lakewide.state.lag)."""

from __future__ import annotations

import time

import click
from rich.markup import escape
from rich.table import Table

from lakewide.commands.output.console import console
from lakewide.commands.output.output import loud, mode, output_options
from lakewide.commands.services.context import (
    Options,
    pass_options,
    profile_options,
    selected,
    selection,
)
from lakewide.project.durations import describe
from lakewide.state.lag import FRESH, ModelLag, model_lags
from lakewide.vocabulary import events
from lakewide.vocabulary.errors import ConfigError

COLOURS = {"pass": "green", "error": "red", "none": "dim", "unknown": "yellow"}


def status(lag: ModelLag) -> str:
    """``pass`` (within its target), ``error`` (over it, or not built), ``none`` (no target)."""
    within = lag.within_target
    if within is None:
        return "none"
    return "pass" if within else "error"


def lag_text(lag: ModelLag) -> str:
    if lag.lag is None:
        return lag.state
    return "fresh" if lag.state == FRESH else describe(lag.lag)


def _event(lag: ModelLag) -> None:
    events.emit(
        "LogFreshnessResult",
        f"{status(lag).upper()} freshness of {lag.name}: {lag_text(lag)}"
        + ("" if lag.target is None else f" (target {describe(lag.target)})"),
        "error" if status(lag) == "error" else "info",
        node_info={
            "unique_id": mode.unique_id(lag.name),
            "node_name": lag.name,
            "node_status": status(lag),
            "resource_type": "model",
        },
        status=status(lag),
        state=lag.state,
        lag_seconds=None if lag.lag is None else round(lag.lag, 3),
        target_seconds=lag.target,
        behind=list(lag.behind),
        upstream_lag_seconds={t: round(v, 3) for t, v in lag.upstream.items()},
        message=lag.why,
    )


@click.command()
@selection
@profile_options
@output_options
@pass_options
def freshness(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Each model's lag behind its upstreams and its freshness target (exit 1: one is over)."""
    from lakewide.state.readers import metadata_reader

    manifest = options.manifest()
    names = selected(manifest, select, exclude)
    output = manifest.output
    reader = metadata_reader(output)
    if reader is None:
        raise ConfigError(
            "lakewide freshness reads Iceberg metadata without Spark, which it can for the "
            "hadoop catalog on a local folder, JDBC and REST catalogs; this target's catalog is "
            f"catalog_type {output.catalog_type!r} at {output.warehouse or output.uri}",
            key="catalog_type",
        )
    lags = model_lags(manifest, names, reader.table_meta, int(time.time() * 1000))
    over = [lag for lag in lags if status(lag) == "error"]
    with_target = sum(lag.target is not None for lag in lags)
    line = (
        f"Freshness: {with_target - len(over)} of {with_target} model(s) with a target within "
        f"it, {len(over)} over it or not built; {len(lags) - with_target} without a target."
    )
    if mode.json:
        for lag in lags:
            _event(lag)
        events.emit("StatsLine", line, "error" if over else "info", error=len(over))
    else:
        table = Table(title="Freshness (lag behind upstreams)", title_justify="left")
        for column in ("model", "lag", "target", "status", "behind"):
            table.add_column(column, justify="right" if column == "lag" else "left")
        for lag in lags:
            colour = COLOURS[status(lag)]
            target = "" if lag.target is None else describe(lag.target)
            table.add_row(
                lag.name,
                lag_text(lag),
                target,
                f"[{colour}]{status(lag)}[/{colour}]",
                escape(", ".join(lag.behind) or lag.why),
            )
        console.print(table)
        with loud():
            console.print(line)
    raise SystemExit(1 if over else 0)

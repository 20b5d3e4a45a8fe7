"""``lakewide ls``: the selected models in run order."""

from __future__ import annotations

import click

from lakewide.commands.output.console import console
from lakewide.commands.services.context import (
    Options,
    pass_options,
    profile_options,
    selected,
    selection,
    state_options,
)


@click.command(name="ls")
@selection
@profile_options
@state_options
@pass_options
def ls(options: Options, select: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """List models in run order with their materialization and relation."""
    manifest = options.manifest()
    for name in selected(manifest, select, exclude):
        node = manifest.models[name]
        engine = node.config.merge_engine or node.config.kind
        console.print(f"{name}\t{engine}\t{node.relation}\t{manifest.project.relative(node.path)}")

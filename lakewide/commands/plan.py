"""``lakewide plan``: what a run would change, model by model, before anything runs (no JVM)."""

from __future__ import annotations

import json
import sys
from functools import partial

import click

from lakewide.commands.output.console import console
from lakewide.commands.services import context
from lakewide.commands.services.context import Options


@click.command()
@context.selection
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="What is printed; target/plan.json and target/plan.md are written either way.",
)
@context.profile_options
@partial(context.state_options, defer=False)
@context.pass_options
def plan(options: Options, select: tuple[str, ...], exclude: tuple[str, ...], format_: str) -> None:
    """Say per model whether it is new, changed or unchanged (against --state, else against its
    table), what a run does to each changed key table under the schema-change rules (or why it
    refuses, and the command that fixes it), and which downstream models a change breaks. With
    --state the models are judged as the state's target would run them, from any target. Exit
    code 1 when a run would refuse a change. Reads table metadata without a JVM."""
    from lakewide.artifacts.state_compare import load_state
    from lakewide.run.preview.report import plan_json, plan_markdown, plan_text
    from lakewide.run.preview.run_preview import plan_changes
    from lakewide.state.readers import metadata_reader

    manifest = options.manifest()
    state = load_state(options.state_dir) if options.state_dir is not None else None
    names = context.selected(manifest, select, exclude)
    reader = metadata_reader(manifest.output)
    result = plan_changes(manifest, names, state, reader, options.variables)
    output = manifest.output
    target = {"catalog": output.catalog, "namespace": output.namespace}
    document = plan_json(result, None if state is None else str(state.path), target)
    markdown = plan_markdown(result)
    folder = manifest.project.target_path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    (folder / "plan.md").write_text(markdown, encoding="utf-8")
    if format_ == "json":
        click.echo(json.dumps(document, indent=2))
    elif format_ == "markdown":
        click.echo(markdown)
    else:
        console.print(plan_text(result), markup=False, highlight=False)
    sys.exit(1 if result.refused else 0)

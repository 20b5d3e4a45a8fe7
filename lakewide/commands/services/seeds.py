"""Checking and loading the project's seeds with their report (``seed`` and ``build``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakewide.commands.output.console import console
from lakewide.project.manifest import Manifest
from lakewide.vocabulary import events

if TYPE_CHECKING:
    from lakewide.run.models.seed_load import SeedResult
    from lakewide.spark.adapter import SparkAdapter


def check_seeds(manifest: Manifest) -> None:
    """Seed files are checked (types files, UTF-8, headers) before Spark starts."""
    from lakewide.project.seeds import find_seeds

    find_seeds(manifest.project, manifest.output)


def load_and_report(manifest: Manifest, adapter: SparkAdapter) -> None:
    """Load every seed, a line each; all changed seeds' values are checked first, so a bad
    value in one seed leaves every seed table as it was."""
    from lakewide.project.seeds import seeds_to_load
    from lakewide.run.models.seed_load import load_seeds

    if manifest.seed_tables is not None:
        read = sorted(name for name, table in manifest.seed_tables.items() if table is None)
        if read:
            console.print(
                f"Seeds unchanged since --state, read from production's tables, not loaded: "
                f"{', '.join(read)}"
            )
    seeds = seeds_to_load(manifest.project, manifest.output, manifest.seed_tables)
    if not seeds:
        return
    adapter.start()  # its own step: not part of the first seed's time
    events.emit("StepStart", f"checking and loading {len(seeds)} seed(s) ...")
    for found in seeds:
        adapter.check_seed(found.path, found.relation, found.types)

    def report(seed: SeedResult) -> None:
        adapter.raise_if_stopped()
        console.print(
            f"seed {seed.name:<24} {_done(seed):>16} -> {seed.relation} ({seed.seconds:.1f}s)"
        )
        console.print(f"     {_types(seed)}", highlight=False, soft_wrap=True)

    load_seeds(manifest, adapter, report)


def _done(seed: SeedResult) -> str:
    """``unchanged``, ``+3 rows appended``, ``12 rows overwritten``, ..."""
    if seed.rows is None:
        return "unchanged"
    return f"{'+' if seed.action == 'appended' else ''}{seed.rows} rows {seed.action}"


def _types(seed: SeedResult) -> str:
    """Each column with its type; a type given in ``column_types`` is marked ``(declared)``."""
    return ", ".join(
        f"{c} {t}{' (declared)' if c in seed.declared else ''}" for c, t in seed.types.items()
    )

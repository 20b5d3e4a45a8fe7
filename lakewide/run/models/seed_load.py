"""Loading the project's CSV seeds into their tables (``lakewide seed``), through the adapter."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakewide.project.seeds import seeds_to_load

if TYPE_CHECKING:
    from lakewide.project.manifest import Manifest
    from lakewide.spark.seed_csv import SeedLoading


@dataclass
class SeedResult:
    """One CSV seed loaded into its table."""

    name: str
    relation: str
    rows: int | None  # None: the table already held this file
    seconds: float
    types: dict[str, str] = field(default_factory=dict)  # every column's type
    declared: tuple[str, ...] = ()  # the columns typed by column_types
    action: str = "unchanged"  # created | appended | overwritten | replaced | unchanged


def load_seeds(
    manifest: Manifest, adapter: SeedLoading, on_result: Callable[[SeedResult], None] | None = None
) -> list[SeedResult]:
    """Write every changed seed's CSV into its table as commits of the table's history
    (lakewide.spark.seed_csv: appended, overwritten, or created); a table already holding its
    file is left as it is. A deferred build loads only the seeds changed since its state, into
    the target's own namespace (``manifest.seed_tables``)."""
    results = []
    for seed in seeds_to_load(manifest.project, manifest.output, manifest.seed_tables):
        started = time.perf_counter()
        action, rows = adapter.load_csv(seed.path, seed.relation, seed.types)
        result = SeedResult(
            seed.path.stem,
            str(seed.relation),
            rows,
            time.perf_counter() - started,
            seed.types,
            tuple(seed.column_types),
            action,
        )
        results.append(result)
        if on_result:
            on_result(result)
    return results

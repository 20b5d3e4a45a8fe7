"""A run on an environment's branch (``--branch NAME``): what it refuses, what it prepares.

Every write of the run goes to the branch through the session (lakewide.spark.session) and
every read of a table that has the branch reads it (lakewide.state.branches); here, before a
model runs, each table it writes gets the branch, made at main's head when missing. A branch
that exists is continued, not refused: a developer runs on the same branch again and again,
each run resuming from the branch's own offsets. A branch behind main (published, and
production ran on since) first moves to main's head: it holds nothing unpublished.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from sqlglot import exp

from lakewide.compiler.plans import steps as p
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.vocabulary.errors import UsageError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter
    from lakewide.state.metadata import MetadataReader


def check_branch_run(
    manifest: Manifest,
    names: list[str],
    full_refresh: bool,
    reader: MetadataReader | None,
) -> None:
    """Refuse (UsageError, exit 2) what a run on the output's branch cannot do, before
    anything runs: a view (Iceberg branches are tables'), ``--full-refresh`` (replacing a
    table is a change of main's table), a model whose table is not on main yet (``reader``:
    where the catalog is read without Spark; elsewhere the run refuses it)."""
    branch = manifest.output.branch
    if branch is None:
        return
    if full_refresh:
        raise UsageError(
            f"--full-refresh replaces tables, which Iceberg does on main, not on branch "
            f"{branch}: run without it (the branch continues from its own offsets), or "
            "full-refresh on main"
        )
    for name in names:
        node = manifest.models[name]
        if not node.config.kind.stores_rows:
            raise UsageError(
                f"model {name} is a view, and Iceberg branches are tables': leave it out of "
                f"the run on branch {branch} (--exclude {name})"
            )
        meta = None if reader is None else reader.table_meta(node.relation)
        if reader is not None and (meta is None or meta.current is None):
            raise UsageError(
                f"model {name}: table {node.relation} has no snapshot on main yet, so it has "
                f"no branch {branch} to write; build it on main first (`lakewide run -s "
                f"{name}` without --branch), then on the branch"
            )


def prepare_branch(adapter: SparkAdapter, model: str, relations: list[Relation]) -> None:
    """Give each table ``model`` writes the output's branch (made at main's head when missing)."""
    for relation in relations:
        adapter.ensure_branch(relation, model)


def overwriting(steps: list[p.Step]) -> list[p.Step]:
    """A table model's rebuild on a branch: each ``CREATE OR REPLACE TABLE ... AS q`` becomes
    ``INSERT OVERWRITE <table> q``, which Iceberg commits to the session's branch (a replace
    would make a new table on main)."""

    def overwrite(step: p.Step) -> p.Step:
        if not isinstance(step, p.Commit) or not isinstance(step.statement, exp.Create):
            return step
        create = step.statement
        insert = exp.Insert(this=create.this.copy(), expression=create.expression.copy())
        insert.set("overwrite", True)
        return dataclasses.replace(step, statement=insert)

    return [overwrite(step) for step in steps]

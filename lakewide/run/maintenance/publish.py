"""Publishing an environment's branch (write-audit-publish): the data tests of the selected
models run against the branch; only when all pass is each model's main fast-forwarded to the
branch's head, model by model in DAG order (the model's changelog table, then its table).

Each fast-forward is one Iceberg commit of one table, so a publish stopped half-way leaves
every table either at main's old head or at the branch's; the next publish skips the tables
whose main is the branch's head already and moves the rest. A table whose main moved on since
the branch was made (main is no longer an ancestor of the branch's head), or a model whose
table on the branch is ahead of its changelog table (a branch run of an earlier version stopped
between the two), stops the publish before anything moves, naming the model. A branch run
stopped after a changelog append and before its model's table moved to the staged commit
(lakewide.run.models.branch_stage) is settled first. Once a model's table is on the branch's head,
the contract the branch stored (lakewide.compiler.schema.contract: under keys of its own) becomes
main's, in one metadata commit; a publish stopped before it makes it when run again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lakewide.compiler.statements.build_changes import changelog_relation
from lakewide.project.data_tests import DataTest
from lakewide.project.graph import topological_order
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation
from lakewide.run.models.branch_stage import settle
from lakewide.run.testing.data_test_runner import TestResult, run_tests
from lakewide.spark.adapter import SparkAdapter
from lakewide.state.branches import BranchState, branch_state
from lakewide.state.changelog_producer import missing_changes
from lakewide.state.contract_store import ContractStore
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary import faults
from lakewide.vocabulary.errors import ModelRunError, UsageError


class PublishRefused(ModelRunError):
    """The branch cannot be published: a data test failed, or main moved (exit code 1)."""


@dataclass
class Move:
    """One table of a publish: where its main and branch stand, and what publish did."""

    model: str
    relation: Relation
    state: BranchState
    action: str = ""  # forwarded | up to date


def tables_to_publish(
    manifest: Manifest, adapter: SparkAdapter, names: list[str], branch: str
) -> list[Move]:
    """Each selected model's tables that have ``branch`` (its changelog table, then its table),
    in DAG order. UsageError (exit 2) when a model's table has no such branch; PublishRefused
    when main cannot be fast-forwarded to it."""
    moves = []
    # views have no branches: they read the tables of the models they select from
    views = {n for n in names if not manifest.models[n].config.kind.stores_rows}
    order = [n for n in topological_order(manifest.models) if n in names and n not in views]
    for name in order:
        relation = manifest.models[name].relation
        changes = changelog_relation(relation)
        adapter.forget(changes)
        metas = {changes: adapter.table_meta(changes)}
        if metas[changes] is not None:  # only a model with a changelog table stages commits
            settle(adapter, relation, changes)  # a branch run stopped before its table moved
        adapter.forget(relation)
        metas[relation] = adapter.table_meta(relation)
        # the changelog table first: a publish stopped between the two leaves no model's main
        # ahead of the changes its downstream models read
        for table in (changes, relation):
            meta = metas[table]
            state = None if meta is None else branch_state(meta, branch)
            if table is relation and (state is None or state.head is None):
                raise UsageError(
                    f"model {name}: table {relation} has no branch {branch}; run the model on "
                    f"it first (`lakewide run --branch {branch} -s {name}`), or leave it out "
                    "of the publish (-s / --exclude)"
                )
            if state is None or state.head is None:
                continue  # no changelog table, or one the branch run did not write
            if not state.forwardable:
                raise PublishRefused(
                    f"model {name}: main of {table} moved since branch {branch} was made "
                    f"(main's head {state.main} is not an ancestor of the branch's head "
                    f"{state.head}), so it cannot be fast-forwarded; nothing was published. "
                    f"Run the model on the branch again after rebuilding it from main "
                    f"(`lakewide branch drop {branch}`, then `lakewide run --branch {branch}`)"
                )
            moves.append(Move(name, table, state))
        _check_changelog(name, branch, metas[relation], metas[changes])
    return moves


def _check_changelog(
    name: str, branch: str, meta: TableMeta | None, changes: TableMeta | None
) -> None:
    """PublishRefused when the model's table on ``branch`` (``meta``, seen on the branch) has
    MERGE commits whose changes its changelog table lacks: a run stopped between the two, and
    publishing would give main's readers a table ahead of the changes its downstream models
    read."""
    if changes is None:
        return
    missing = missing_changes(meta, changes)
    if missing:
        raise PublishRefused(
            f"model {name}: on branch {branch} its table holds {len(missing)} commit(s) whose "
            f"changes its changelog table lacks (a run stopped between the two); nothing was "
            f"published. `lakewide run --branch {branch} -s {name}` completes them first, "
            "then publish"
        )


def publish(
    manifest: Manifest,
    adapter: SparkAdapter,
    names: list[str],
    tests: list[DataTest],
    on_test: Callable[[TestResult], None] | None = None,
    on_move: Callable[[Move], None] | None = None,
) -> tuple[list[TestResult], list[Move]]:
    """Test the branch, then fast-forward main to it (see the module's docstring). Raises
    PublishRefused, main untouched, when a test fails or could not run."""
    branch = adapter.output.branch
    assert branch is not None, "publish runs on the branch it publishes"
    moves = tables_to_publish(manifest, adapter, names, branch)
    results = run_tests(manifest, adapter, tests, on_result=on_test)
    failed = [r for r in results if r.blocks]
    if failed:
        raise PublishRefused(
            f"{len(failed)} data test(s) failed on branch {branch} ({failed[0].name} first); "
            "main was not moved: fix the models, run them on the branch again, then publish"
        )
    contracts = ContractStore(adapter)
    for move in moves:
        if move.state.ahead == 0:
            move.action = "up to date"
        else:
            adapter.fast_forward(move.relation, branch)
            move.action = "forwarded"
            faults.checkpoint("after-forward")
        if move.relation == manifest.models[move.model].relation:
            contracts.publish(move.relation, branch)  # the branch's contract becomes main's
        if on_move is not None:
            on_move(move)
    return results, moves

"""Which read each source branch gets, and what each engine accepts from a changelog (no JVM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler import PlanContext, compile_model
from lakewide.compiler.model.wide_model import WideModel, analyze
from lakewide.compiler.plans import steps as p
from lakewide.compiler.plans.show_plan import plan_text
from lakewide.compiler.plans.steps import BranchPlan
from lakewide.compiler.statements.build_changelog_read import KIND, changelog_merge, retract_policy
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.run.models.read_modes import ReadPlan, choose_read
from lakewide.state.offsets import Snapshot, TableMeta
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import ModelRunError

SQL = "SELECT k, n, v FROM lw.ods.src"


def node(config: dict[str, Any], sql: str = SQL) -> ModelNode:
    parsed = parse_model_config({"primary_key": "k", **config}, path="models/m.sql")
    return ModelNode("m", Path("models/m.sql"), sql, sql, parsed, Relation("lw", "db", "m"))


def model(config: dict[str, Any], sql: str = SQL) -> WideModel:
    return analyze(node(config, sql))


def branch_plan(config: dict[str, Any]) -> BranchPlan:
    context = PlanContext({"lw.ods.src": Relation("lw", "ods", "src")})
    plans = compile_model(node(config), context).plans
    assert plans is not None
    return plans.branches[0]


SUM = {"merge_engine": "aggregation", "aggregates": {"n": "sum"}}
MAX = {"merge_engine": "aggregation", "aggregates": {"n": "max", "v": "max"}}
PARTIAL = {"merge_engine": "partial_update"}


def history(*operations: str, deletes: int = 0, version: int | None = None) -> TableMeta:
    """Snapshots 1..N in a line; the last ``deletes`` of them hold delete files; ``version``:
    the table's format version (None: the reader did not say)."""
    snapshots = {}
    for i, op in enumerate(operations, start=1):
        summary = {"total-delete-files": "1" if i > len(operations) - deletes else "0"}
        snapshots[i] = Snapshot(i, i - 1 if i > 1 else None, op, summary)
    return TableMeta(len(operations), snapshots, version)


def plan(
    config: dict[str, Any],
    meta: TableMeta | None,
    start: int | None,
    *,
    consumed: bool = True,
) -> ReadPlan:
    end = meta.current if meta is not None else None
    return choose_read(
        branch_plan(config),
        str(config["merge_engine"]),
        "lw.ods.src",
        start,
        end,
        consumed=consumed,
        meta=lambda: meta,
    )


def test_a_source_empty_at_bootstrap_is_read_whole_even_for_sum() -> None:
    assert plan(SUM, history("append", "append"), None).mode == "full"


def test_a_branch_missing_from_the_offsets_cannot_be_reread_by_sum() -> None:
    """Re-reading would double-count: refused unless the run re-folds the model
    (lakewide.run.models.refresh_choice decides; the refusal travels with the read)."""
    read = plan(SUM, history("append"), None, consumed=False)
    assert read.lossy and read.refusal is not None and "no consumed offset" in read.refusal
    partial = plan(PARTIAL, history("append"), None, consumed=False)
    assert (partial.mode, partial.lossy, partial.refusal) == ("full", True, None)


@pytest.mark.parametrize(
    "operations, deletes, expected",
    [
        (("append", "append", "append"), 0, "incremental"),
        (("append", "overwrite", "append"), 0, "changelog"),
        (("append", "delete", "replace"), 0, "changelog"),
        (("append", "overwrite"), 1, "positions"),  # merge-on-read: by row position
        (("append", "delete", "replace"), 1, "changelog"),  # a compaction's delete files
    ],
)
def test_modes_by_upstream_history(
    operations: tuple[str, ...], deletes: int, expected: str
) -> None:
    assert plan(PARTIAL, history(*operations, deletes=deletes), 1).mode == expected


@pytest.mark.parametrize(
    "version, expected", [(3, "positions"), (2, "changelog"), (None, "changelog")]
)
def test_copy_on_write_commits_of_a_format_3_table_are_paired_by_row_lineage(
    version: int | None, expected: str
) -> None:
    """Row lineage tells a rewritten file's changed rows from those it carried over: no
    Iceberg changelog (its shuffle of every row of both sides) where the table keeps it."""
    for config in (SUM, PARTIAL, MAX):
        read = plan(config, history("append", "overwrite", version=version), 1)
        assert (read.mode, read.changes) == (expected, True)
        assert ("row lineage" in read.reason) == (expected == "positions")
    appends = plan(PARTIAL, history("append", "append", version=version), 1)
    assert appends.mode == "incremental"


def test_nothing_new_reads_nothing() -> None:
    assert plan(SUM, history("append"), 1).mode == "none"
    assert plan(SUM, None, None).mode == "none"


def test_merge_on_read_sources_are_read_by_position_for_every_engine() -> None:
    """Old images come with the changes: sum retracts them, as over a copy-on-write source."""
    for config in (SUM, PARTIAL, MAX, {"merge_engine": "deduplicate"}):
        read = plan(config, history("append", "overwrite", deletes=1), 1)
        assert (read.mode, read.reads, read.changes) == ("positions", "changelog", True)


def test_a_replaced_source_is_no_descendant() -> None:
    replaced = TableMeta(2, {1: Snapshot(1, None, "append"), 2: Snapshot(2, None, "overwrite")})
    refused = plan(SUM, replaced, 1).refusal
    assert refused is not None and "no longer descends from snapshot 1" in refused
    assert plan(PARTIAL, replaced, 1).mode == "full"


@pytest.mark.parametrize(
    "config, expected",
    [
        (SUM, (False, False)),
        ({**SUM, "ignore_delete": True}, (True, False)),
        (PARTIAL, (True, True)),
        ({**PARTIAL, "remove_record_on_delete": True}, (False, False)),
        ({"merge_engine": "first_row"}, (True, False)),
        ({"merge_engine": "deduplicate"}, (False, False)),
        (MAX, (True, False)),  # max cannot retract, but re-reading is harmless: adds only
    ],
)
def test_retract_policy_per_engine(config: dict[str, Any], expected: tuple[bool, bool]) -> None:
    assert retract_policy(model(config), "lw.ods.src") == expected


def test_an_aggregate_that_cannot_retract_next_to_sum_is_refused_with_the_fix() -> None:
    config = {"merge_engine": "aggregation", "aggregates": {"n": "sum", "v": "max"}}
    with pytest.raises(ModelRunError, match="max on column 'v' cannot retract.*ignore_retract"):
        retract_policy(model(config), "lw.ods.src")
    # the compiled plan keeps the refusal for a run that would read a changelog
    branch = branch_plan(config)
    assert branch.changelog is None and branch.changelog_refusal is not None
    assert "max on column 'v' cannot retract" in branch.changelog_refusal
    assert branch_plan(SUM).changelog is not None and branch_plan(SUM).changelog_refusal is None


def test_changelog_batch_orders_retracts_first_and_pairs_updates_per_model_key() -> None:
    m = model(SUM, "SELECT s.k, s.n, s.v FROM lw.ods.src AS s")
    text = to_sql(changelog_merge(m, m.branches[0], "lw.ods.src").batch, pretty=False)
    assert "s._change_type" in text and "s._change_ordinal" in text
    # a DELETE re-added in the same commit for the same model key is an update
    assert "PARTITION BY k, __lw_change_ordinal" in text and "'UPDATE_BEFORE'" in text
    # arrival: commit order, retracts (0) before adds (1), then read order (numbered where
    # the changes are read, before the join)
    assert "END, __lw_row) AS __lw_row" in text and "__lw_change_ordinal * 2 + CASE" in text
    assert "MONOTONICALLY_INCREASING_ID() AS __lw_row, s._change_type" in text
    assert f"{KIND} IN ('-U', '-D', 'UPDATE_BEFORE', 'DELETE')" in text  # sum retracts


TWO = "SELECT k, n, v FROM lw.ods.src UNION ALL SELECT k, n, v FROM lw.ods.other"


@pytest.mark.parametrize(
    "config, combined",
    [
        (SUM, True),
        ({"merge_engine": "deduplicate"}, True),
        ({**PARTIAL, "remove_record_on_delete": True}, True),
        (PARTIAL, False),  # deletes refused per source, with its name: each merges alone
        (MAX, True),  # retracts dropped: harmless
    ],
)
def test_sources_read_as_changes_merge_at_once_where_none_is_refused(
    config: dict[str, Any], combined: bool
) -> None:
    context = PlanContext(
        {"lw.ods.src": Relation("lw", "ods", "src"), "lw.ods.other": Relation("lw", "ods", "other")}
    )
    plans = compile_model(node(config, TWO), context).plans
    assert plans is not None
    assert (plans.combined_changes is not None) is combined
    if combined:
        assert plans.combined_changes is not None
        text = " ".join(
            to_sql(s.statement) for s in plans.combined_changes if isinstance(s, p.Commit)
        )
        assert text.count("MERGE INTO") == 1


REMOVING = {"merge_engine": "partial_update", "remove_record_on_delete": True}


def changes_read(config: dict[str, Any], sql: str = SQL) -> p.Read:
    context = PlanContext({"lw.ods.src": Relation("lw", "ods", "src")})
    plans = compile_model(node(config, sql), context).plans
    assert plans is not None
    [read] = plans.branches[0].reads["changelog"]
    assert isinstance(read, p.Read) and read.kind == "changes"
    return read


@pytest.mark.parametrize(
    ("config", "sql", "kept"),
    [
        # partial_update takes of a -D its key and order (a -U is dropped): the key, the
        # sequence field and what the branch filters on
        (REMOVING, SQL, ("k",)),
        ({**REMOVING, "sequence_field": "ts"}, "SELECT k, n, ts FROM lw.ods.src", ("k", "ts")),
        (REMOVING, SQL + " WHERE v > 0", ("k", "v")),
        (REMOVING, "SELECT payload.id AS k, n, v FROM lw.ods.src", ("id", "payload")),
        (PARTIAL, SQL, ("k",)),  # deletes refused: counted by key
        ({"merge_engine": "first_row"}, SQL, ("k",)),  # retracts dropped
        ({"merge_engine": "deduplicate", "ignore_delete": True}, SQL, ("k",)),
        # the old values are folded: every column
        (SUM, SQL, None),
        ({"merge_engine": "deduplicate"}, SQL, None),
        (
            {"merge_engine": "partial_update", "sequence_groups": {"g": ["n"]}},
            "SELECT k, n, g FROM lw.ods.src",
            None,
        ),
        # a NULL could change the branch's rows
        (REMOVING, "SELECT k, n, v FROM lw.ods.src LATERAL VIEW explode(a) x AS e", None),
        (REMOVING, "SELECT k, explode(a) AS n, v FROM lw.ods.src", None),
        (REMOVING, "SELECT k, my_udf(n) AS n, v FROM lw.ods.src", None),
    ],
)
def test_old_images_keep_the_columns_the_engine_takes(
    config: dict[str, Any], sql: str, kept: tuple[str, ...] | None
) -> None:
    assert changes_read(config, sql).retracts == kept


@pytest.mark.parametrize(
    ("config", "shown"),
    [
        (REMOVING, "; old images read by position or marking: k (others NULL)"),
        (SUM, None),  # every column: nothing to say
    ],
)
def test_the_plan_names_the_columns_old_images_keep(
    config: dict[str, Any], shown: str | None
) -> None:
    text = plan_text([changes_read(config)], to_sql)
    assert text.startswith("-- read ") and "changelog after" in text
    assert (shown in text) if shown else ("old images" not in text)

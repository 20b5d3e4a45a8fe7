"""``run --restate``'s plan (no JVM): the predicate's checks, the fold restricted to the keys,
and the one MERGE replacing, inserting and deleting them (lakewide.compiler.statements.build_restate)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from lakewide.compiler.plans import steps as p
from lakewide.compiler.statements.build_restate import GONE, RESTATE_VIEW
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import UsageError
from tests.compiler.plans.test_run_plan import compiled

WIDE = (
    "SELECT id, x, CAST(NULL AS INT) AS y, ts FROM lw.db.a "
    "UNION ALL SELECT id, CAST(NULL AS INT), y, CAST(NULL AS TIMESTAMP) FROM lw.db.b"
)
CONTEXT = {"upstream": ["lw.db.a", "lw.db.b"], "producing": [], "produces": False}


def _model(produces: bool = False, **config: object):
    return compiled(
        {"merge_engine": "partial_update", "primary_key": ["id"], **config},
        {**CONTEXT, "produces": produces},
        WIDE,
    )


@pytest.mark.parametrize(
    ("predicate", "said"),
    [
        ("x = 1", "x is neither in the primary key nor a partition column"),
        ("nope = 1", "nope is not a column of the model"),
        ("id IN (SELECT 1)", "a subquery is not accepted"),
        ("rand() < 0.5", "rand() is not deterministic"),
        ("id < current_date()", "is not deterministic"),
        ("id <", "does not parse"),
        ("SELECT 1", "is a statement, not a condition"),
        ("id", "is a value, not a condition"),
        ("MAX(id) > 1", "an aggregate or window function is not accepted"),
        ("a.id = 1", "name the column id without a table"),
    ],
)
def test_bad_predicates_are_refused_naming_the_option(predicate: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        _model(partition_by=["days(ts)"]).restate_plan(predicate)
    message = str(caught.value)
    assert "--restate" in message and said in message
    assert "primary key or partition columns (id, ts)" in message


def test_only_key_tables_restate() -> None:
    table = compiled({"materialized": "table"}, CONTEXT, "SELECT id FROM lw.db.a")
    with pytest.raises(UsageError, match="--restate applies to key tables"):
        table.restate_plan("id = 1")


def test_a_key_predicate_is_applied_to_the_sources_before_the_fold() -> None:
    steps = _model().restate_plan("ID BETWEEN 10 AND 19")
    stage = next(s for s in steps if isinstance(s, p.Stage))
    assert stage.view == RESTATE_VIEW
    fold = stage.query.find(exp.Group)
    assert fold is not None
    # the filter sits under the fold, over the union of the pinned sources
    filtered = [w for w in stage.query.find_all(exp.Where) if w.find(exp.Between)]
    assert any(w.parent_select.find(exp.Union) for w in filtered)
    text = to_sql(stage.query, pretty=False)
    assert "__lw_pin_1" in text and "__lw_pin_2" in text and "id BETWEEN 10 AND 19" in text


def test_a_partition_predicate_chooses_the_keys_after_the_fold() -> None:
    steps = _model(partition_by=["days(ts)"]).restate_plan("ts >= '2024-01-01'")
    stage = next(s for s in steps if isinstance(s, p.Stage))
    union = stage.query.find(exp.Union)
    assert union is not None and not union.parent_select.args.get("where")
    text = to_sql(stage.query, pretty=False)
    # the keys whose stored row is in the range are restated too (a key leaving it)
    assert "FROM lw.db.m WHERE ts >= '2024-01-01'" in text
    assert "__lw_f.ts >= '2024-01-01' OR NOT __lw_k.id IS NULL" in text


def test_one_merge_replaces_inserts_and_deletes_the_keys() -> None:
    steps = _model(produces=True).restate_plan("id < 5")
    commits = [s for s in steps if isinstance(s, p.Commit)]
    merge, changelog = commits
    assert not merge.changelog and changelog.changelog
    assert merge.properties == {p.PRODUCES: "lookup"}
    text = to_sql(merge.statement, pretty=False)
    assert f"WHEN MATCHED AND s.{GONE} THEN DELETE" in text
    assert "WHEN MATCHED THEN UPDATE SET t.x = s.x, t.y = s.y, t.ts = s.ts" in text
    assert f"WHEN NOT MATCHED AND NOT s.{GONE} THEN INSERT (id, x, y, ts)" in text
    assert "NOT MATCHED BY SOURCE" not in text
    assert merge.narrowed is not None and "BETWEEN" in to_sql(merge.narrowed, pretty=False)
    assert [s.into for s in steps if isinstance(s, p.Query)] == [("restated", "removed")]

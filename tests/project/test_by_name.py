"""A model's narrow form (``UNION ALL BY NAME``): the positional UNION ALL it stands for, and
the errors that say how to write it."""

from __future__ import annotations

import pytest
import sqlglot

from lakewide.project.by_name import positional
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import CompileError

NARROW = (
    "SELECT k, CAST(a AS STRING) AS a, CAST(NULL AS DECIMAL(10, 2)) AS b, NULL AS c, ts "
    "FROM s.one UNION ALL BY NAME SELECT ts, b, k FROM s.two "
    "UNION ALL BY NAME SELECT k, c, CAST(NULL AS STRING) AS a, ts FROM s.three"
)


def test_a_branch_writes_a_null_typed_as_the_first_branch_for_what_it_does_not_name() -> None:
    query = positional(sqlglot.parse_one(NARROW, read=DIALECT))
    assert query.sql(DIALECT) == (
        "SELECT k, CAST(a AS STRING) AS a, CAST(NULL AS DECIMAL(10, 2)) AS b, NULL AS c, ts "
        "FROM s.one UNION ALL SELECT k, CAST(NULL AS STRING), b, NULL, ts FROM s.two "
        "UNION ALL SELECT k, CAST(NULL AS STRING) AS a, CAST(NULL AS DECIMAL(10, 2)), c, ts "
        "FROM s.three"
    )


def test_a_query_without_by_name_is_left_as_it_is() -> None:
    text = "SELECT k, a FROM s.one UNION ALL SELECT k, NULL FROM s.two"
    assert positional(sqlglot.parse_one(text, read=DIALECT)).sql(DIALECT) == text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "SELECT k, a FROM s.one UNION ALL BY NAME SELECT k, zz FROM s.two",
            "branch 2 of the UNION ALL BY NAME selects column 'zz', which the first branch "
            "does not name",
        ),
        (
            "SELECT k, a + 1 FROM s.one UNION ALL BY NAME SELECT k FROM s.two",
            "column 2 of the first branch has no name; a UNION ALL BY NAME branch names each "
            "column: add AS <column_name> to `a + 1`",
        ),
        (
            "SELECT k, a FROM s.one UNION ALL BY NAME SELECT k, a + 1 FROM s.two",
            "selects `a + 1`, which the first branch does not name",
        ),
        (
            "SELECT k FROM s.one UNION ALL BY NAME SELECT k FROM s.two UNION ALL "
            "SELECT k FROM s.three",
            "UNION ALL BY NAME throughout or not at all",
        ),
    ],
)
def test_errors_say_how_to_write_the_narrow_form(text: str, says: str) -> None:
    with pytest.raises(CompileError) as raised:
        positional(sqlglot.parse_one(text, read=DIALECT), "models/w.sql", "w")
    assert says in raised.value.message and raised.value.model == "w"

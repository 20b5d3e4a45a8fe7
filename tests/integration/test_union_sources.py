"""A model written with ``lakewide.union_sources`` builds and runs on real Spark + Iceberg as
the same model written by hand does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark]

CONFIG = "{{ config(merge_engine='partial_update', primary_key='k', sequence_field='ts') }}\n"
MACRO = CONFIG + (
    "{{ lakewide.union_sources([source('src', 'a'), source('src', 'b'), "
    "{'relation': source('src', 'c'), 'columns': {'z': 'BIGINT'}}], key='k', sequence='ts') }}\n"
)
BY_HAND = CONFIG + (
    "SELECT k, x, shared, CAST(NULL AS DOUBLE) AS y, CAST(NULL AS BIGINT) AS z, ts "
    "FROM {{ source('src', 'a') }} UNION ALL "
    "SELECT k, CAST(NULL AS STRING), shared, y, CAST(NULL AS BIGINT), ts "
    "FROM {{ source('src', 'b') }} UNION ALL "
    "SELECT k, CAST(NULL AS STRING), CAST(NULL AS INT), CAST(NULL AS DOUBLE), z, ts "
    "FROM {{ source('src', 'c') }}\n"
)
SCHEMAS = {
    "a": "k INT, x STRING, shared INT, ts INT",
    "b": "k INT, y DOUBLE, shared INT, ts INT",
    "c": "k INT, z BIGINT, ts INT",
}
YAML_COLUMNS = {
    "a": "[{name: x, data_type: string}, {name: shared, data_type: int}]",
    "b": "[{name: y, data_type: double}, {name: shared, data_type: int}]",
}


def test_a_macro_written_model_builds_and_runs_as_the_hand_written_one(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(MACRO, SCHEMAS)
    models = m.run.root / "models"
    (models / "sources.yml").write_text(_sources_yaml(m.run.seed_schema))
    (models / "h.sql").write_text(BY_HAND)
    first = m.step(
        {
            "a": [(1, "a1", 10, 1), (2, "a2", 20, 1)],
            "b": [(1, 1.5, 11, 2), (3, 3.5, None, 1)],
            "c": [(2, 200, 1)],
        }
    )
    assert first == m.run.rows("h")
    assert first == [
        (1, "a1", 11, 1.5, None, 2),
        (2, "a2", 20, None, 200, 1),
        (3, None, None, 3.5, None, 1),
    ]
    second = m.step({"a": [(3, "a3", 30, 2)], "c": [(1, 100, 3)]})
    assert second == m.run.rows("h")
    assert second[0] == (1, "a1", 11, 1.5, 100, 3) and second[2] == (3, "a3", 30, 3.5, None, 2)


def _sources_yaml(schema: str) -> str:
    tables = "".join(
        f"      - name: {t}\n"
        + (f"        columns: {YAML_COLUMNS[t]}\n" if t in YAML_COLUMNS else "")
        for t in SCHEMAS
    )
    return f"sources:\n  - name: src\n    schema: {schema}\n    tables:\n{tables}"

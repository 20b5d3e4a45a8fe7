"""Aggregate functions meet the types the upstreams give their columns (real Spark + Iceberg)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lakewide.run.models.executor import run_models
from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark]

SUM_OF_A_STRING = """
{{ config(merge_engine='aggregation', primary_key='k', aggregates={'total': 'sum'}) }}
SELECT k, amount AS total FROM {{ source('src', 'a') }}
"""


def test_sum_over_an_undeclared_string_column_fails_before_writing(
    model_run: Callable[..., ModelRun],
) -> None:
    """The model declares no type (no CAST): the upstream's STRING reaches ``sum``, which
    would turn every value NULL. The run refuses, naming the key and the fix, and creates
    no table."""
    m = model_run(SUM_OF_A_STRING, {"a": "k INT, amount STRING"})
    m.write("a", [(1, "5"), (2, "x")])
    manifest = m.run.manifest()
    [result] = run_models(manifest, ["m"], m.run.adapter(manifest))
    assert result.status == "error"
    assert "aggregates.total" in result.message and "STRING" in result.message
    assert "CAST(total AS" in result.message
    assert not m.run.spark.catalog.tableExists(f"lw.{m.run.namespace}.m")


def test_sum_over_an_undeclared_numeric_column_runs(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(SUM_OF_A_STRING, {"a": "k INT, amount BIGINT"})
    assert m.step({"a": [(1, 5), (1, 2), (2, 1)]}) == [(1, 7), (2, 1)]

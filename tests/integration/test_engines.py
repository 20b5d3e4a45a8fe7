"""Merge engines on real Spark + Iceberg: deterministic cases from the contract."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.integration.conftest import ModelRun

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SG_MODEL = """
{{ config(merge_engine='partial_update', primary_key='k',
          sequence_groups={'g_1': ['a', 'b'], 'g_2': ['c', 'd']}) }}
SELECT k, a, b, g_1, c, d, g_2 FROM {{ source('src', 'sg') }}
"""
SG_SCHEMA = {"sg": "k INT, a INT, b INT, g_1 INT, c INT, d INT, g_2 INT"}


def test_sequence_groups_seed_article(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(SG_MODEL, SG_SCHEMA)
    rows = m.step({"sg": [(1, 1, 1, 1, 1, 1, 1), (1, 2, 2, 2, 2, 2, None)]})
    assert rows == [(1, 2, 2, 2, 1, 1, 1)]
    rows = m.step({"sg": [(1, 3, 3, 1, 3, 3, 3)]})
    assert rows == [(1, 2, 2, 2, 3, 3, 3)]
    rows = m.step({"sg": [(1, 3, 3, 3, 2, 2, None), (1, 4, 4, 4, 2, 2, None),
                          (1, 5, 5, 3, 5, None, 4)]})
    assert rows == [(1, 4, 4, 4, 5, None, 4)]


def test_sequence_groups_bootstrap_of_all_rows_is_the_same(
        model_run: Callable[..., ModelRun]) -> None:
    m = model_run(SG_MODEL, SG_SCHEMA)
    rows = m.step({"sg": [(1, 1, 1, 1, 1, 1, 1), (1, 2, 2, 2, 2, 2, None),
                          (1, 3, 3, 1, 3, 3, 3), (1, 3, 3, 3, 2, 2, None),
                          (1, 4, 4, 4, 2, 2, None), (1, 5, 5, 3, 5, None, 4)]})
    assert rows == [(1, 4, 4, 4, 5, None, 4)]

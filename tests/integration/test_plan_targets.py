"""``plan --state prod-target`` judges a pull request as production's run would, from any target
(issue 48): a wide table whose branch LEFT JOINs a lookup model, an aggregation over it, and
a new column in each. Under ``-t dev`` the models render ``ref()`` as ``lw.<dev>.*``; the plan
must still compare them with production's stored contracts (``lw.<prod>.*``) and give the
statuses, actions, refusals, fixes and exit code that ``-t prod`` gives.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.project_factory import PROD_DEV_PROFILES, make_project

pytestmark = [pytest.mark.spark]

_counter = itertools.count(1)
LABELS = """\
{{ config(materialized='table') }}
SELECT tier, label FROM {{ source('src', 'labels') }}
"""
WIDE = """\
{{ config(merge_engine='partial_update', primary_key='id', sequence_field='ts') }}
SELECT a.id, CAST(a.region AS STRING) AS region, CAST(t.label AS STRING) AS label,
       CAST(NULL AS BIGINT) AS qty, a.ts
FROM {{ source('src', 'accounts') }} AS a LEFT JOIN {{ ref('tier_labels') }} AS t
  ON a.tier = t.tier
UNION ALL
SELECT o.id, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(o.qty AS BIGINT), o.ts
FROM {{ source('src', 'orders') }} AS o
"""
TOTALS = """\
{{ config(merge_engine='aggregation', primary_key='region', aggregates={'n': 'sum'}) }}
SELECT region, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }} WHERE region IS NOT NULL
"""
# the pull request: a new column in each key table (wide's is taken in place; totals' sum
# would count wide's rows twice, so production's run refuses it)
WIDE_PR = WIDE.replace("AS qty, a.ts", "AS qty, CAST(NULL AS BIGINT) AS amount, a.ts").replace(
    "CAST(o.qty AS BIGINT), o.ts", "CAST(o.qty AS BIGINT), CAST(o.amount AS BIGINT), o.ts"
)
TOTALS_PR = TOTALS.replace("{'n': 'sum'}", "{'n': 'sum', 'total_qty': 'sum'}").replace(
    "AS n FROM", "AS n, CAST(qty AS BIGINT) AS total_qty FROM"
)


def _project(root: Path, warehouse: Path, prod: str, dev: str, src: str) -> None:
    """The project with targets ``prod`` (the default) and ``dev`` in one catalog."""
    profiles = PROD_DEV_PROFILES.replace("warehouse: warehouse", f"warehouse: {warehouse}")
    sources = (
        f"sources:\n  - name: src\n    schema: {src}\n    tables:\n"
        "      - name: accounts\n      - name: orders\n      - name: labels\n"
    )
    files = {"tier_labels": LABELS, "wide": WIDE, "totals": TOTALS}
    make_project(
        root,
        {
            "profiles.yml": profiles.replace("prod}", f"{prod}}}").replace("dev}", f"{dev}}}"),
            "models/sources.yml": sources,
            **{f"models/{name}.sql": sql for name, sql in files.items()},
        },
    )


def _judged(document: dict[str, Any]) -> dict[str, Any]:
    """What the plan says of each model and downstream model, the target's own table aside."""
    models = {
        m["name"]: {k: v for k, v in m.items() if k != "relation"} for m in document["models"]
    }
    return {"models": models, "downstream": document["downstream"], "refused": document["refused"]}


def test_plan_judges_a_pull_request_as_production_from_any_target(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: Callable[..., tuple[int, str]],
) -> None:
    n = next(_counter)
    prod, dev, src = f"pt{n}_prod", f"pt{n}_dev", f"pt{n}_src"
    for table, schema, rows in (
        ("accounts", "id bigint, region string, tier string, ts bigint", [(1, "east", "g", 1)]),
        ("orders", "id bigint, qty bigint, amount bigint, ts bigint", [(1, 3, 30, 2)]),
        ("labels", "tier string, label string", [("g", "Gold")]),
    ):
        spark.createDataFrame(rows, schema).writeTo(f"lw.{src}.{table}").using("iceberg").create()
    main = tmp_path / "main"
    _project(main, warehouse, prod, dev, src)
    code, output = cli(main, "build")
    assert code == 0, output
    shutil.copytree(main / "target", tmp_path / "prod-target")

    pull = tmp_path / "pull"
    shutil.copytree(main, pull, ignore=shutil.ignore_patterns("target"))
    (pull / "models" / "wide.sql").write_text(WIDE_PR)
    (pull / "models" / "totals.sql").write_text(TOTALS_PR)
    state = str(tmp_path / "prod-target")
    plans = {}
    for target in ("prod", "dev"):
        code, output = cli(pull, "plan", "-t", target, "--state", state)
        plans[target] = (code, output, json.loads((pull / "target" / "plan.json").read_text()))

    code, output, document = plans["prod"]
    dev_code, dev_output, dev_document = plans["dev"]
    assert _judged(dev_document) == _judged(document)
    assert dev_code == code == 1, dev_output
    assert {m["name"]: m["relation"] for m in dev_document["models"]} == {
        name: f"lw.{dev}.{name}" for name in ("tier_labels", "wide", "totals")
    }
    models = {m["name"]: m for m in document["models"]}
    assert models["tier_labels"]["status"] == "unchanged"
    wide, totals = models["wide"], models["totals"]
    assert (wide["status"], wide["action"], wide["refusals"]) == ("changed", "schema changes", [])
    assert any(f"column amount of source lw.{src}.orders" in c for c in wide["changes"]), wide
    assert (totals["status"], totals["action"]) == ("changed", "refused")
    [refusal] = totals["refusals"]
    assert f"new column total_qty in existing source lw.{prod}.wide" in refusal
    assert "would count its rows twice" in refusal
    assert totals["fix"].startswith("`lakewide run -t prod --full-refresh -s totals`")
    assert "fix: `lakewide run -t prod --full-refresh -s totals`" in output

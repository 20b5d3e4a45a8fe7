"""The pull-request workflow on real Spark + Iceberg (issue 32, first Done-when bullet): a
production build; a copy of the project that edits one model and adds one; ``plan --state``
lists exactly those and the models downstream; ``build -s state:modified+ --defer --state``
into a dev namespace builds only them, reads the rest from production and writes nothing there.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.state.metadata import current_metadata_file, read_table_meta
from tests.integration.conftest import null_first

pytestmark = [pytest.mark.spark]

_counter = itertools.count(1)
WIDE = """\
{{ config(merge_engine='partial_update', primary_key='id', sequence_field='ts') }}
SELECT id, CAST(amount AS BIGINT) AS amount, CAST(NULL AS STRING) AS name, ts
FROM {{ source('src', 'orders') }}
UNION ALL
SELECT id, CAST(NULL AS BIGINT), CAST(name AS STRING), ts FROM {{ source('src', 'customers') }}
"""
# the pull request: a new column from customers (a change the run applies in place)
WIDE_WITH_TIER = WIDE.replace("AS name, ts", "AS name, CAST(NULL AS STRING) AS tier, ts").replace(
    "CAST(name AS STRING), ts", "CAST(name AS STRING), CAST(tier AS STRING), ts"
)
MODELS = {
    "wide.sql": WIDE,
    "big.sql": "SELECT id, amount FROM {{ ref('wide') }} WHERE amount > 10",
    "names.sql": "SELECT id, name FROM {{ ref('wide') }}",
    "lonely.sql": "SELECT id, amount FROM {{ source('src', 'orders') }}",
}
# the pull request's new model: reads a model it does not change (production's) and one it does
REPORT = (
    "SELECT l.id, w.tier FROM {{ ref('lonely') }} AS l "
    "LEFT JOIN {{ ref('wide') }} AS w ON l.id = w.id"
)
ORDERS = [(1, 5, 1), (2, 50, 1), (3, 15, 1)]
CUSTOMERS = [(1, "a", "gold", 2), (2, "b", "silver", 2), (4, "d", "gold", 2)]


def _project(root: Path, warehouse: Path, prod: str, dev: str, src: str) -> None:
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "t"\n\n[tool.lakewide]\nprofile = "t"\n'
    )
    outputs = "".join(
        f"    {name}:\n      catalog: lw\n      catalog_type: hadoop\n"
        f"      warehouse: {warehouse}\n      namespace: {namespace}\n"
        for name, namespace in (("prod", prod), ("dev", dev))
    )
    (root / "profiles.yml").write_text(f"t:\n  target: prod\n  outputs:\n{outputs}")
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {src}\n    tables:\n"
        "      - name: orders\n      - name: customers\n"
    )
    for name, sql in MODELS.items():
        (root / "models" / name).write_text(sql)


def _snapshots(warehouse: Path, namespace: str, names: list[str]) -> dict[str, Any]:
    """Each table's current snapshot and metadata file (a tag or property would write one)."""
    found = {}
    for name in names:
        relation = Relation("lw", namespace, name)
        meta = read_table_meta(warehouse, relation)
        assert meta is not None, name
        found[name] = (meta.current, current_metadata_file(warehouse, relation))
    return found


def tables_in(spark: Any, namespace: str) -> set[str]:
    """The tables of ``namespace`` (``SHOW TABLES``: the test session's interpreted
    expressions cannot decode ``spark.catalog.listTables``' objects)."""
    return {r.tableName for r in spark.sql(f"SHOW TABLES IN {namespace}").collect()}


def _rows(spark: Any, table: str) -> list[tuple]:
    frame = spark.table(table)
    frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
    return sorted((tuple(r) for r in frame.collect()), key=null_first)


def test_plan_then_deferred_build_of_a_pull_request(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: Callable[..., tuple[int, str]],
) -> None:
    n = next(_counter)
    prod, dev, src = f"pr{n}_prod", f"pr{n}_dev", f"pr{n}_src"
    spark.createDataFrame(ORDERS, "id bigint, amount bigint, ts bigint").writeTo(
        f"lw.{src}.orders"
    ).using("iceberg").create()
    spark.createDataFrame(CUSTOMERS, "id bigint, name string, tier string, ts bigint").writeTo(
        f"lw.{src}.customers"
    ).using("iceberg").create()
    main = tmp_path / "main"
    _project(main, warehouse, prod, dev, src)
    code, output = cli(main, "build")
    assert code == 0, output
    shutil.copytree(main / "target", tmp_path / "prod-target")
    # production moved on since: a row only production's table has (the dev build must read it)
    spark.sql(f"INSERT INTO lw.{prod}.lonely VALUES (9, 99)")
    models = ["wide", "big", "names", "lonely"]
    before = _snapshots(warehouse, prod, models)

    pull = tmp_path / "pull"
    shutil.copytree(main, pull, ignore=shutil.ignore_patterns("target"))
    (pull / "models" / "wide.sql").write_text(WIDE_WITH_TIER)
    (pull / "models" / "report.sql").write_text(REPORT)
    state = str(tmp_path / "prod-target")

    code, output = cli(pull, "plan", "-t", "dev", "--state", state, "--format", "json")
    assert code == 0, output
    document = json.loads((pull / "target" / "plan.json").read_text())
    statuses = {m["name"]: m["status"] for m in document["models"]}
    assert statuses == {
        "wide": "changed",
        "report": "new",
        "big": "unchanged",
        "names": "unchanged",
        "lonely": "unchanged",
    }
    wide = next(m for m in document["models"] if m["name"] == "wide")
    assert wide["action"] == "schema changes" and wide["table"] == f"lw.{prod}.wide"
    assert any("column tier of source" in c for c in wide["changes"]), wide
    # report reads wide too, but is new itself: listed as new, not as downstream
    assert {d["name"]: d["breaking"] for d in document["downstream"]} == {
        "big": False,
        "names": False,
    }

    code, output = cli(
        pull, "build", "-t", "dev", "-s", "state:modified+", "--defer", "--state", state
    )
    assert code == 0, output
    built = tables_in(spark, f"lw.{dev}")
    assert built == {"wide", "big", "names", "report"}  # lonely: read from production
    customers = {c[0]: c for c in CUSTOMERS}
    amounts = {o[0]: o[1] for o in ORDERS}
    keys = sorted(set(amounts) | set(customers))
    expected_wide = [
        (k, amounts.get(k), customers.get(k, (k, None))[1], customers.get(k, (0, 0, None))[2])
        for k in keys
    ]
    assert [r[:4] for r in _rows(spark, f"lw.{dev}.wide")] == sorted(expected_wide)
    assert _rows(spark, f"lw.{dev}.big") == [(k, a) for k, a in sorted(amounts.items()) if a > 10]
    assert _rows(spark, f"lw.{dev}.names") == [(k, customers.get(k, (k, None))[1]) for k in keys]
    tiers = {k: customers[k][2] for k in customers}
    lonely_prod = sorted(amounts) + [9]
    assert _rows(spark, f"lw.{dev}.report") == [(k, tiers.get(k)) for k in lonely_prod]
    assert _snapshots(warehouse, prod, models) == before  # production was not written
    # the manifest the deferred build wrote names the project's own tables: a state later
    written = json.loads((pull / "target" / "manifest.json").read_text())
    assert written["nodes"]["model.t.lonely"]["relation_name"] == f"lw.{dev}.lonely"


TIERS = "id,label\n1,gold\n2,silver\n"
EDITED_TIERS = "id,label\n1,platinum\n2,silver\n3,bronze\n"
REGIONS = "id,region\n1,north\n"


def test_a_deferred_build_loads_a_changed_seed_into_its_own_namespace(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: Callable[..., tuple[int, str]],
) -> None:
    """A pull request edits a seed's CSV: the deferred build loads it into the target's own
    namespace, the models reading it (``state:modified``: their input changed) read that
    copy, and production's seed tables (the shared seed-schema) keep their snapshots; an
    unchanged seed is not loaded, production's table is read."""
    n = next(_counter)
    prod, dev, raw = f"ps{n}_prod", f"ps{n}_dev", f"ps{n}_raw"
    main = tmp_path / "main"
    _project(main, warehouse, prod, dev, f"ps{n}_src")
    for name in MODELS:
        (main / "models" / name).unlink()
    (main / "pyproject.toml").write_text(
        (main / "pyproject.toml").read_text() + f'seed-schema = "{raw}"\n'
    )
    (main / "models" / "sources.yml").write_text(
        f"sources:\n  - name: raw\n    schema: {raw}\n    tables:\n"
        "      - name: tiers\n      - name: regions\n"
    )
    (main / "models" / "labelled.sql").write_text(
        "SELECT id, upper(label) AS label FROM {{ source('raw', 'tiers') }}"
    )
    (main / "models" / "placed.sql").write_text(
        "SELECT id, region FROM {{ source('raw', 'regions') }}"
    )
    (main / "seeds").mkdir()
    (main / "seeds" / "tiers.csv").write_text(TIERS)
    (main / "seeds" / "regions.csv").write_text(REGIONS)
    code, output = cli(main, "build")
    assert code == 0, output
    shutil.copytree(main / "target", tmp_path / "prod-target")
    seeds_before = _snapshots(warehouse, raw, ["tiers", "regions"])
    models_before = _snapshots(warehouse, prod, ["labelled", "placed"])

    pull = tmp_path / "pull"
    shutil.copytree(main, pull, ignore=shutil.ignore_patterns("target"))
    (pull / "seeds" / "tiers.csv").write_text(EDITED_TIERS)
    state = str(tmp_path / "prod-target")
    code, output = cli(pull, "ls", "-t", "dev", "--state", state, "-s", "state:modified")
    assert code == 0, output
    assert "labelled" in output and "placed" not in output, output

    code, output = cli(
        pull, "build", "-t", "dev", "-s", "state:modified+", "--defer", "--state", state
    )
    assert code == 0, output
    assert _snapshots(warehouse, raw, ["tiers", "regions"]) == seeds_before
    assert _snapshots(warehouse, prod, ["labelled", "placed"]) == models_before
    assert _rows(spark, f"lw.{raw}.tiers") == [(1, "gold"), (2, "silver")]
    assert _rows(spark, f"lw.{dev}.tiers") == [(1, "platinum"), (2, "silver"), (3, "bronze")]
    assert _rows(spark, f"lw.{dev}.labelled") == [(1, "PLATINUM"), (2, "SILVER"), (3, "BRONZE")]
    built = tables_in(spark, f"lw.{dev}")
    assert built == {"tiers", "labelled"}  # regions unchanged: production's is read
    assert "regions" in output and "not loaded" in output, output

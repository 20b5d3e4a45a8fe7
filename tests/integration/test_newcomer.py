"""A newcomer's first hour, scripted: ``init``, an own 4-source wide table, ``build``, new rows
appended the documented way (a seed CSV that grew, ``lakewide load`` into an ingested table),
an incremental ``run`` that is exact, a column added, and ``docs generate`` showing the YAML
descriptions and data tests. Every table is checked against a plain-Python fold of the inputs
and against a ``--full-refresh``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import _counter, null_first

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CLI = Callable[..., tuple[int, str]]

#: source -> (its columns after the key, the Spark type of each)
SOURCES = {
    "profiles": {"name": "string", "tier": "string"},
    "orders": {"order_count": "int", "zip": "string"},
    "tickets": {"ticket_id": "string"},
    "loyalty": {"points": "int"},
}

MODEL_YML = """\
version: 2
models:
  - name: customer_360
    description: One row per customer, from four sources.
    columns:
      - name: customer_id
        description: The customer's id, the primary key.
        data_tests: [unique, not_null]
      - name: tier
        description: Loyalty tier from the CRM profile.
        data_tests:
          - accepted_values:
              values: [gold, silver, bronze]
"""


def _model(columns: dict[str, dict[str, str]]) -> str:
    """The 'UNION ALL with NULL columns' model over ``columns`` (source -> owned columns)."""
    every = [(c, t) for owned in columns.values() for c, t in owned.items()]
    branches = []
    for source, owned in columns.items():
        cells = [c if c in owned else f"CAST(NULL AS {t.upper()}) AS {c}" for c, t in every]
        branches.append(
            f"SELECT customer_id, {', '.join(cells)}\nFROM {{{{ source('raw', '{source}') }}}}"
        )
    config = "{{ config(merge_engine='partial_update', primary_key='customer_id') }}\n"
    return config + "\nUNION ALL\n".join(branches) + "\n"


def _write_csv(root: Path, table: str, header: list[str], rows: list[tuple[Any, ...]]) -> None:
    text = "\n".join([",".join(header), *(",".join(map(str, r)) for r in rows)])
    (root / "seeds" / f"{table}.csv").write_text(text + "\n", encoding="utf-8")


def _fold(inputs: dict[str, list[dict[str, Any]]], columns: list[str]) -> list[tuple[Any, ...]]:
    """The oracle: per key, each column's last non-null value in arrival order (each source
    owns its own columns, so only the order within a source matters)."""
    table: dict[int, dict[str, Any]] = {}
    for rows in inputs.values():
        for row in rows:
            stored = table.setdefault(row["customer_id"], dict.fromkeys(columns))
            stored.update({c: v for c, v in row.items() if v is not None and c in columns})
            stored["customer_id"] = row["customer_id"]
    return sorted((tuple(r[c] for c in columns) for r in table.values()), key=null_first)


def _rows(spark: Any, relation: str, columns: list[str]) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r) for r in spark.table(relation).select(*columns).collect()), key=null_first
    )


def _read_modes(root: Path) -> dict[str, str]:
    document = json.loads((root / "target" / "run_results.json").read_text())
    (result,) = [r for r in document["results"] if r["name"] == "customer_360"]
    assert result["plan"] == "incremental", result
    return {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in result["ranges"]}


def test_newcomer_first_hour(tmp_path: Path, spark: Any, warehouse: Path, cli: CLI) -> None:
    n = next(_counter)
    raw, analytics = f"nc{n}_raw", f"nc{n}_analytics"
    root = tmp_path / "customer 360"
    code, out = cli(tmp_path, "init", str(root))
    assert code == 0, out
    # point the new project at the test session's warehouse, in namespaces of its own
    profiles = (root / "profiles.yml").read_text()
    profiles = profiles.replace("warehouse: warehouse", f"warehouse: {warehouse}")
    (root / "profiles.yml").write_text(
        profiles.replace("namespace: analytics", f"namespace: {analytics}")
    )
    pyproject = (root / "pyproject.toml").read_text()
    (root / "pyproject.toml").write_text(
        pyproject.replace('seed-schema = "raw"', f'seed-schema = "{raw}"')
    )
    for path in (root / "models").glob("*.sql"):
        path.unlink()
    for path in (root / "seeds").glob("*.csv"):
        path.unlink()

    # three sources are seeds, the fourth (loyalty) a table an ingestion job writes
    tables = "".join(f"      - name: {t}\n" for t in SOURCES)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: raw\n    schema: {raw}\n    tables:\n{tables}"
    )
    (root / "models" / "customer_360.sql").write_text(_model(SOURCES))
    (root / "models" / "customer_360.yml").write_text(MODEL_YML)
    inputs: dict[str, list[dict[str, Any]]] = {
        "profiles": [
            {"customer_id": 1, "name": "Ada", "tier": "gold"},
            {"customer_id": 2, "name": "Grace", "tier": "silver"},
        ],
        "orders": [
            {"customer_id": 1, "order_count": 3, "zip": "00123"},
            {"customer_id": 3, "order_count": 1, "zip": "04105"},
        ],
        "tickets": [{"customer_id": 2, "ticket_id": "T1"}, {"customer_id": 4, "ticket_id": "T2"}],
        "loyalty": [{"customer_id": 1, "points": 10}, {"customer_id": 4, "points": 7}],
    }

    def write_seeds() -> None:
        for table in ("profiles", "orders", "tickets"):
            header = ["customer_id", *SOURCES[table]]
            _write_csv(
                root, table, header, [tuple(r.get(c, "") for c in header) for r in inputs[table]]
            )

    write_seeds()
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{raw}")
    spark.sql(f"CREATE TABLE lw.{raw}.loyalty (customer_id INT, points INT) USING iceberg")
    spark.sql(f"INSERT INTO lw.{raw}.loyalty VALUES (1, 10), (4, 7)")

    columns = ["customer_id", *(c for owned in SOURCES.values() for c in owned)]
    relation = f"lw.{analytics}.customer_360"
    code, out = cli(root, "build")
    assert code == 0, out
    assert "zip string" in out and "ticket_id string" in out, out  # conservative seed types
    assert _rows(spark, relation, columns) == _fold(inputs, columns)

    # new rows: a seed CSV grows (then `lakewide seed`), a file is loaded into the ingested table
    inputs["profiles"] += [
        {"customer_id": 1, "name": "Ada", "tier": "bronze"},
        {"customer_id": 5, "name": "Linus", "tier": "silver"},
    ]
    inputs["loyalty"] += [{"customer_id": 5, "points": 3}, {"customer_id": 1, "points": 12}]
    write_seeds()
    (tmp_path / "points.csv").write_text("customer_id,points\n5,3\n1,12\n")
    code, out = cli(root, "seed")
    assert code == 0 and "+2 rows appended" in out, out
    code, out = cli(root, "load", "raw.loyalty", str(tmp_path / "points.csv"))
    assert code == 0, out
    code, out = cli(root, "run")
    assert code == 0, out
    assert _read_modes(root) == {
        "profiles": "incremental",
        "orders": "none",
        "tickets": "none",
        "loyalty": "incremental",
    }
    assert _rows(spark, relation, columns) == _fold(inputs, columns)

    # a column added to one source's branch: the run stays incremental and exact
    owned = {**SOURCES, "profiles": {**SOURCES["profiles"], "email": "string"}}
    inputs["profiles"] = [
        {**r, "email": f"{r['name'].lower()}@example.com"} for r in inputs["profiles"]
    ]
    write_seeds_with_email = ["customer_id", *owned["profiles"]]
    _write_csv(
        root,
        "profiles",
        write_seeds_with_email,
        [tuple(r[c] for c in write_seeds_with_email) for r in inputs["profiles"]],
    )
    (root / "models" / "customer_360.sql").write_text(_model(owned))
    code, out = cli(root, "build")
    assert code == 0, out
    columns = ["customer_id", *(c for o in owned.values() for c in o)]
    expected = _fold(inputs, columns)
    assert _rows(spark, relation, columns) == expected
    code, out = cli(root, "run", "--full-refresh")
    assert code == 0, out
    assert _rows(spark, relation, columns) == expected

    # the docs site shows the YAML's descriptions and data tests
    code, out = cli(root, "docs", "generate")
    assert code == 0, out
    site = "".join(
        p.read_text(errors="replace")
        for p in (root / "target").rglob("*")
        if p.is_file() and p.suffix in {".html", ".json", ".js"}
    )
    for text in (
        "One row per customer, from four sources.",
        "Loyalty tier from the CRM profile.",
        "accepted_values",
        "not_null",
    ):
        assert text in site, text

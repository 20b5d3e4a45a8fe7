"""A table's state against the project on real Spark: an edited model is refused, never skipped
or half-run; an unreadable metadata file fails only its model (issue 9, section 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler.plans.upstream import compile_in
from lakewide.run.models.executor import run_models
from lakewide.run.models.key_table_run import KeyTableRun
from lakewide.run.schema.schema_steps import SchemaChangeRefused
from lakewide.state.definition import definition_digest
from lakewide.state.metadata import current_metadata_file, table_dir
from lakewide.state.nothing_new import fresh_models
from lakewide.state.offsets import DEFINITION
from tests.integration.conftest import ModelRun
from tests.integration.test_incremental import COUNTERS, SCHEMAS, snapshots

pytestmark = [pytest.mark.spark]

# COUNTERS with one more column, owned by source a
EDITED = COUNTERS.replace(
    "SELECT k, clicks, CAST(NULL AS BIGINT) AS buys",
    "SELECT k, clicks, clicks * 2 AS doubled, CAST(NULL AS BIGINT) AS buys",
).replace(
    "SELECT k, CAST(NULL AS BIGINT), buys",
    "SELECT k, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), buys",
)
TABLE = "{{ config(materialized='table') }}\nSELECT k, v FROM {{ source('src', 'c') }}\n"


def edit(m: ModelRun, name: str, sql: str) -> None:
    (m.run.root / "models" / f"{name}.sql").write_text(sql)


def test_edited_key_model_is_refused_until_full_refresh(
    model_run: Callable[..., ModelRun],
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    built = m.step({"a": [(1, 2)], "b": [(1, 5)]})
    assert snapshots(m)[-1][1][DEFINITION] == definition_digest(m.run.manifest().models["m"])
    edit(m, "m", EDITED)  # a new column of a summing source: only a rebuild fills it right
    m.write("a", [(2, 1)])  # new data: the run would not be a no-op either way
    before = snapshots(m)
    assert fresh_models(m.run.manifest(), ["m"]) == set()  # the no-op check sends it to Spark

    # the run (exit 2 through the CLI: tests/integration/test_schema_changes.py)
    manifest = m.run.manifest()
    with pytest.raises(SchemaChangeRefused) as caught:
        run_models(manifest, ["m"], m.run.adapter(manifest))
    assert caught.value.exit_code == 2 and "--full-refresh -s m" in str(caught.value)
    assert "new column doubled in existing source" in str(caught.value)
    # the incremental plan checks again (a table rebuilt by someone else since the run began)
    run = KeyTableRun(
        m.run.adapter(manifest), manifest, compile_in(manifest, manifest.models["m"]), "r"
    )
    with pytest.raises(SchemaChangeRefused):
        run.incremental()
    assert snapshots(m) == before and m.run.rows("m") == built

    rows = m.step({}, full_refresh=True)
    assert m.last.plan == "full-refresh"
    assert rows == [(1, 2, 4, 5, 2), (2, 1, 2, None, 1)]
    assert fresh_models(m.run.manifest(), ["m"]) == {"m"}  # the new digest is stored


def test_edited_table_model_is_rebuilt_not_skipped(model_run: Callable[..., ModelRun]) -> None:
    m = model_run(TABLE, {"c": "k INT, v STRING"})
    m.step({"c": [(1, "x")]})
    assert fresh_models(m.run.manifest(), ["m"]) == {"m"}
    edit(m, "m", TABLE.replace("SELECT k, v", "SELECT k, v, upper(v) AS u"))
    assert fresh_models(m.run.manifest(), ["m"]) == set()
    assert m.step({}) == [(1, "x", "X")]
    assert m.last.plan == "table" and m.last.statements >= 1


def test_corrupt_metadata_fails_only_its_model(
    model_run: Callable[..., ModelRun], warehouse: Path
) -> None:
    m = model_run(COUNTERS, {**SCHEMAS, "c": "k INT, v STRING"})
    edit(m, "t", TABLE)
    m.write("c", [(1, "x")])
    m.step({"a": [(1, 2)], "b": [(1, 5)]})
    m.step({"a": [(1, 3)]})  # a second commit: a previous metadata version to fall back to
    spark: Any = m.run.spark
    relation = m.run.manifest().models["m"].relation
    metadata = current_metadata_file(warehouse, relation)
    assert metadata is not None
    text = metadata.read_text()
    metadata.write_text(text[: len(text) // 2])  # truncated
    m.write("c", [(2, "y")])

    spark.catalog.refreshTable(str(relation))  # forget the cached table, as a new process would
    manifest = m.run.manifest()
    results = {r.name: r for r in run_models(manifest, ["m", "t"], m.run.adapter(manifest))}
    assert results["m"].status == "error"  # the CLI exits 1
    assert f"table {relation}" in results["m"].message
    assert str(metadata) in results["m"].message and "version-hint.text" in results["m"].message
    assert results["t"].status == "success" and results["t"].plan == "table"
    assert m.run.rows("t") == [(1, "x"), (2, "y")]  # the independent model ran

    # the way out the message names: move the file aside, point the hint at the previous one
    version = int(metadata.name[1:].split(".")[0])
    metadata.rename(metadata.with_name(metadata.name + ".corrupt"))
    hint = table_dir(warehouse, relation) / "metadata" / "version-hint.text"
    hint.write_text(str(version - 1))
    spark.catalog.refreshTable(str(relation))
    assert m.step({}) == [(1, 5, 5, 3)]  # resumed from the older commit's offsets: exact

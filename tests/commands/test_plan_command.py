"""``lakewide plan`` without a JVM: a production table's stored contract (metadata written by
pyiceberg, as Spark would have) against a pull request's edits of its model, classified by the
schema-change rules; downstream models broken or not; the exit code; pyspark never imported."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import IcebergType, LongType, NestedField, StringType
from sqlglot import exp

from lakewide.artifacts.manifest_json import write_manifest_json
from lakewide.compiler.model.wide_model import analyze
from lakewide.compiler.schema.contract import CONTRACT
from lakewide.project.profiles import warehouse_path
from lakewide.run.preview.columns import cast_type
from lakewide.run.preview.run_preview import key_contract
from lakewide.state.definition import definition_digest
from lakewide.state.metadata import table_dir
from lakewide.state.offsets import DEFINITION, OFFSETS
from lakewide.vocabulary.dialect import DIALECT
from tests.support import iceberg_files
from tests.support.project_factory import PROD_DEV_PROFILES, make_project, manifest_of, run_main

SOURCES = (
    "sources:\n  - name: src\n    tables:\n      - name: a\n      - name: b\n      - name: c\n"
)
WIDE = """\
{{ config(merge_engine='partial_update', primary_key='id', sequence_field='ts') }}
SELECT id, CAST(x AS BIGINT) AS x, CAST(NULL AS STRING) AS y, ts FROM {{ source('src', 'a') }}
UNION ALL
SELECT id, CAST(NULL AS BIGINT), CAST(y AS STRING), ts FROM {{ source('src', 'b') }}
"""
FILES = {
    "profiles.yml": PROD_DEV_PROFILES,
    "models/sources.yml": SOURCES,
    "models/wide.sql": WIDE,
    "models/reads_y.sql": "SELECT id, y FROM {{ ref('wide') }}",
    "models/reads_x.sql": "SELECT id FROM {{ ref('wide') }} WHERE x > 0",
    "models/after_y.sql": "SELECT id FROM {{ ref('reads_y') }}",
    "models/snap.sql": "{{ config(materialized='snapshot', unique_key='id', strategy='check', "
    "check_cols=['x']) }}\nSELECT id, x FROM {{ source('src', 'a') }}\n",
}
ICEBERG: dict[str, IcebergType] = {"bigint": LongType(), "string": StringType()}


def _production(tmp_path: Path, committed: bool = False) -> Path:
    """The project built for prod (manifest.json in prod-target/, wide's table metadata as a
    run leaves it: its columns and stored contract; ``committed``: and a run's commit, with the
    definition digest a plan without --state compares with)."""
    root = make_project(tmp_path / "project", FILES)
    manifest = manifest_of(root, target="prod")
    write_manifest_json(manifest)
    shutil.copytree(root / "target", tmp_path / "prod-target")
    node = manifest.models["wide"]
    model = analyze(node)
    types = {c: "string" if c == "y" else "bigint" for c in model.table_columns}
    contract = key_contract(node, model, types)
    fields = [
        NestedField(i + 1, c, ICEBERG[t], required=False) for i, (c, t) in enumerate(types.items())
    ]
    warehouse = warehouse_path(manifest.output.warehouse)
    assert warehouse is not None
    location = table_dir(warehouse, node.relation)
    metadata = new_table_metadata(
        Schema(*fields),
        UNPARTITIONED_PARTITION_SPEC,
        UNSORTED_SORT_ORDER,
        str(location),
        {"format-version": "2", CONTRACT: contract.to_json()},
    )
    if committed:
        built = {OFFSETS: "{}", DEFINITION: definition_digest(node)}
        metadata = iceberg_files.commit(metadata, 1, built)
    iceberg_files.write(warehouse, node.relation, metadata, 1)
    snap = manifest.models["snap"].relation
    iceberg_files.write(warehouse, snap, iceberg_files.empty_table(table_dir(warehouse, snap)), 1)
    return root


def _no_jvm_plan(root: Path, tmp_path: Path, *args: str) -> tuple[int, str]:
    """``lakewide plan ARGS`` in a process where pyspark cannot be imported and no Java is
    found: (exit code, output)."""
    fake = tmp_path / "no_pyspark"
    (fake / "pyspark").mkdir(parents=True, exist_ok=True)
    (fake / "pyspark" / "__init__.py").write_text("raise ImportError('no JVM allowed here')\n")
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(root), "plan", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PYTHONPATH": f"{fake}:{Path(__file__).resolve().parents[2]}",
            "JAVA_HOME": "/no",
            "PATH": "/usr/bin:/bin",
            "COLUMNS": "200",
        },
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    return done.returncode, output


def _plan(root: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """``plan -t dev --state prod-target ARGS`` without a JVM: exit code, plan.json, output."""
    state = str(tmp_path / "prod-target")
    code, output = _no_jvm_plan(root, tmp_path, "-t", "dev", "--state", state, *args)
    return code, _document(root), output


def _document(root: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((root / "target" / "plan.json").read_text("utf-8"))
    return document


PlanRun = Callable[..., tuple[int, dict[str, Any], str]]


@pytest.fixture
def plan(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> PlanRun:
    """``plan -t dev --state prod-target ARGS`` in this process (faster than ``_plan``; a
    Spark start fails the test): exit code, plan.json, output."""
    from lakewide.spark import runtime

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        pytest.fail("plan started Spark")

    monkeypatch.setattr(runtime, "create_session", refuse)

    def run(root: Path, *args: str) -> tuple[int, dict[str, Any], str]:
        state = str(tmp_path / "prod-target")
        given = ("--project-dir", str(root), "plan", "-t", "dev", "--state", state, *args)
        code, output = run_main(monkeypatch, capsys, *given)
        assert "Traceback" not in output, output
        return code, _document(root), output

    return run


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "models" / "wide.sql"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _model(document: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in document["models"] if m["name"] == name)


NEW_SOURCE = (
    "UNION ALL\nSELECT id, CAST(z AS BIGINT), CAST(NULL AS STRING), ts FROM "
    "{{ source('src', 'c') }}\n"
)


def test_new_source_is_added_and_nothing_breaks(tmp_path: Path) -> None:
    root = _production(tmp_path)
    (root / "models/wide.sql").write_text(WIDE + NEW_SOURCE, encoding="utf-8")
    extra = "SELECT id, x FROM {{ ref('wide') }}"  # new, downstream of wide: listed as new
    (root / "models/extra.sql").write_text(extra, encoding="utf-8")
    code, document, output = _plan(root, tmp_path)
    assert code == 0, output
    wide = _model(document, "wide")
    assert (wide["status"], wide["modified"], wide["action"]) == (
        "changed",
        ["body"],
        "schema changes",
    )
    assert wide["table"] == "lw.prod.wide" and wide["relation"] == "lw.dev.wide"
    assert any("new source lw.src.c (branch 3)" in c for c in wide["changes"]), wide
    assert wide["refusals"] == [] and document["refused"] == []
    assert [(d["name"], d["breaking"]) for d in document["downstream"]] == [
        ("reads_x", False),
        ("reads_y", False),
        ("after_y", False),
    ]
    assert {m["name"]: m["status"] for m in document["models"]} == {
        "wide": "changed",
        "reads_x": "unchanged",
        "reads_y": "unchanged",
        "after_y": "unchanged",
        "snap": "unchanged",
        "extra": "new",
    }


def test_changed_key_is_refused_with_exit_1(plan: PlanRun, tmp_path: Path) -> None:
    root = _production(tmp_path)
    _edit(root, "merge_engine='partial_update'", "merge_engine='deduplicate'")
    code, document, output = plan(root, "--format", "markdown")
    assert code == 1, output
    assert document["refused"] == ["wide"]
    wide = _model(document, "wide")
    assert wide["action"] == "refused" and wide["modified"] == ["configs"]
    assert any(
        "merge_engine changed: stored 'partial_update', configured 'deduplicate'" in r
        for r in wide["refusals"]
    )
    assert "refused: wide" in output and "| wide | changed (configs) |" in output
    assert (root / "target" / "plan.md").read_text(encoding="utf-8").strip() in output


def test_removed_column_breaks_the_readers_of_it(plan: PlanRun, tmp_path: Path) -> None:
    root = _production(tmp_path)
    _edit(root, ", CAST(NULL AS STRING) AS y", "")
    _edit(root, ", CAST(y AS STRING)", "")
    code, document, output = plan(root)
    assert code == 0, output  # append_new_columns keeps the column in the table
    wide = _model(document, "wide")
    assert wide["removed"] == ["y"] and wide["action"] == "schema changes"
    downstream = {d["name"]: d for d in document["downstream"]}
    assert downstream["reads_y"]["breaking"] and downstream["reads_y"]["columns"] == [
        "wide.y (removed)"
    ]
    assert not downstream["reads_x"]["breaking"]
    assert downstream["after_y"] == {
        "name": "after_y",
        "via": ["wide"],
        "breaking": False,
        "columns": [],
    }
    assert "reads_y: downstream of wide, BREAKING: wide.y (removed)" in output


def test_changed_type_is_refused_and_breaks_its_readers(plan: PlanRun, tmp_path: Path) -> None:
    root = _production(tmp_path)
    _edit(root, "CAST(x AS BIGINT) AS x", "CAST(x AS STRING) AS x")
    _edit(root, "SELECT id, CAST(NULL AS BIGINT)", "SELECT id, CAST(NULL AS STRING)")
    code, document, _output = plan(root, "--format", "json")
    assert code == 1
    wide = _model(document, "wide")
    assert wide["retyped"] == {"x": ["bigint", "string"]}
    assert any(
        "type of column x changed: stored bigint, configured string" in r for r in wide["refusals"]
    )
    downstream = {d["name"]: d for d in document["downstream"]}
    assert downstream["reads_x"]["columns"] == ["wide.x (bigint -> string)"]  # its WHERE reads x
    assert not downstream["reads_y"]["breaking"]


def test_unchanged_project_plans_nothing(plan: PlanRun, tmp_path: Path) -> None:
    root = _production(tmp_path)
    code, document, output = plan(root)
    assert code == 0, output
    assert document["summary"] == {
        "new": 0,
        "changed": 0,
        "unchanged": 5,
        "downstream": 0,
        "breaking": 0,
        "refused": 0,
    }


@pytest.mark.parametrize("selector", ["state:modified+", "+state:modified"])
def test_selection_limits_the_models_listed(plan: PlanRun, tmp_path: Path, selector: str) -> None:
    root = _production(tmp_path)
    (root / "models/wide.sql").write_text(WIDE + NEW_SOURCE, encoding="utf-8")
    _code, document, _output = plan(root, "-s", selector)
    listed = [m["name"] for m in document["models"]]
    assert listed == (
        ["wide", "reads_x", "reads_y", "after_y"] if selector.endswith("+") else ["wide"]
    )


HIVE = PROD_DEV_PROFILES.replace(
    "catalog_type: hadoop, warehouse: warehouse", "catalog_type: hive, uri: 'thrift://localhost:1'"
)


def test_catalog_without_a_reader(plan: PlanRun, tmp_path: Path) -> None:
    """Hive's metadata is not read without a JVM: against --state the changed models' run is
    unknown (not guessed), and without --state plan refuses, naming the option."""
    root = _production(tmp_path)
    (root / "profiles.yml").write_text(HIVE, encoding="utf-8")
    (root / "models/wide.sql").write_text(WIDE + NEW_SOURCE, encoding="utf-8")
    code, document, output = plan(root)
    assert code == 0, output
    assert _model(document, "wide")["action"] == "unknown"
    assert "lakewide run --dry-run" in _model(document, "wide")["changes"][0]
    code, output = _no_jvm_plan(root, tmp_path)
    assert code == 2 and "Give --state DIR" in output, output


def test_changed_snapshot_is_refused(plan: PlanRun, tmp_path: Path) -> None:
    root = _production(tmp_path)
    path = root / "models/snap.sql"
    path.write_text(path.read_text().replace("SELECT id, x", "SELECT id, x, 1 AS one"))
    code, document, output = plan(root, "-s", "snap")
    assert code == 1, output
    snap = _model(document, "snap")
    assert snap["action"] == "refused" and "never rebuilt" in snap["refusals"][0]


@pytest.mark.parametrize(
    ("projection", "spark_type"),
    [
        ("CAST(x AS INTEGER) AS y", "int"),
        ("CAST(x AS LONG)", "bigint"),
        ("CAST(x AS DECIMAL(12, 2))", "decimal(12,2)"),
        ("CAST(x AS DECIMAL)", "decimal(10,0)"),
        ("CAST(x AS VARCHAR(10))", "string"),
        ("CAST(x AS MAP<STRING, ARRAY<CHAR(2)>>)", "map<string,array<string>>"),
        ("TRY_CAST(x AS DOUBLE)", "double"),
        ("x + 1 AS y", None),
    ],
)
def test_cast_types_read_as_spark_names_them(projection: str, spark_type: str | None) -> None:
    """A CAST's type as Spark's ``simpleString`` says it (what stored contracts hold)."""
    query = sqlglot.parse_one(f"SELECT {projection}", read=DIALECT)
    assert isinstance(query, exp.Select)
    assert cast_type(query.selects[0]) == spark_type


def _without_contract(root: Path) -> None:
    """wide's production table as a lakewide before stored contracts left it."""
    manifest = manifest_of(root, target="prod")
    warehouse = warehouse_path(manifest.output.warehouse)
    assert warehouse is not None
    relation = manifest.models["wide"].relation
    metadata = iceberg_files.empty_table(table_dir(warehouse, relation))
    iceberg_files.write(warehouse, relation, metadata, 2)


REFUSED_EDITS: dict[str, Callable[[Path], None]] = {
    "a changed key": lambda root: _edit(
        root, "merge_engine='partial_update'", "merge_engine='deduplicate'"
    ),
    "a changed type": lambda root: _edit(root, "CAST(x AS BIGINT) AS x", "CAST(x AS STRING) AS x"),
    "a table without a contract": lambda root: (
        _without_contract(root),
        (root / "models/wide.sql").write_text(WIDE + NEW_SOURCE, encoding="utf-8"),
    ),
    "a changed snapshot": lambda root: (root / "models/snap.sql").write_text(
        FILES["models/snap.sql"].replace("SELECT id, x", "SELECT id, x, 1 AS one")
    ),
}


@pytest.mark.parametrize("edit", sorted(REFUSED_EDITS))
@pytest.mark.parametrize("target", ["dev", "prod"])
def test_every_refusal_names_the_command_that_fixes_it(
    plan: PlanRun, tmp_path: Path, edit: str, target: str
) -> None:
    """Each REFUSED line, in text and Markdown, ends with the fix: for production's table (the
    state's target), whichever target plans."""
    root = _production(tmp_path)
    REFUSED_EDITS[edit](root)
    code, document, output = plan(root, "-t", target)
    assert code == 1, output
    [refused] = [m for m in document["models"] if m["action"] == "refused"]
    if refused["name"] == "snap":
        fix = "`DROP TABLE lw.prod.snap` (Spark SQL), then `lakewide run -t prod -s snap`"
        assert (
            refused["fix"]
            == f"restore the definition in models/snap.sql; or start a new history: {fix}"
        )
    else:  # wide has models downstream: they are rebuilt with it
        command = "`lakewide run -t prod --full-refresh -s wide+`"
        assert refused["fix"].startswith(f"{command} rebuilds wide and the models downstream")
    lines = [line.strip() for line in output.splitlines() if "REFUSED" in line]
    assert lines and len(lines) == len(refused["refusals"]), output
    assert all(line.endswith(f"; fix: {refused['fix']}") for line in lines), output
    markdown = (root / "target" / "plan.md").read_text(encoding="utf-8")
    assert markdown.count(f"; fix: {refused['fix']}") == len(lines)


def test_without_state_the_fix_is_for_the_target_planned(tmp_path: Path) -> None:
    """Without --state the table compared is the target's own: the fix names that target."""
    root = _production(tmp_path, committed=True)
    _edit(root, "merge_engine='partial_update'", "merge_engine='deduplicate'")
    code, output = _no_jvm_plan(root, tmp_path, "-t", "prod")
    assert code == 1, output
    assert "fix: `lakewide run -t prod --full-refresh -s wide+` rebuilds wide" in output

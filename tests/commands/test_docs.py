"""``lakewide docs``: the documents (types from Iceberg metadata, inferred or unknown; owners;
lineage), the files written, the data embedded safely in the page, and ``docs serve``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import LongType, NestedField, StringType, TimestampType

from lakewide.artifacts.docs.documents import build_documents
from lakewide.cli import cli
from lakewide.project.nodes import Relation
from lakewide.state.metadata import table_dir
from lakewide.state.readers import metadata_reader
from tests.support import iceberg_files
from tests.support.project_factory import copy_example_project, make_project, manifest_of
from tests.test_cli import _no_outside_profiles  # noqa: F401 - autouse fixture


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    return copy_example_project(tmp_path / "example")


def _table(warehouse: Path, relation: Relation, columns: dict[str, object]) -> None:
    """An Iceberg table (metadata only, no snapshot) with the given columns."""
    schema = Schema(
        *(
            NestedField(i, name, kind, required=False)  # type: ignore[arg-type]
            for i, (name, kind) in enumerate(columns.items(), start=1)
        )
    )
    metadata = new_table_metadata(
        schema,
        UNPARTITIONED_PARTITION_SPEC,
        UNSORTED_SORT_ORDER,
        str(table_dir(warehouse, relation)),
        {"format-version": "2"},
    )
    iceberg_files.write(warehouse, relation, metadata, 1)


def _types(entry: dict) -> dict[str, tuple[str | None, str]]:
    return {c: (v["type"], v["type_origin"]) for c, v in entry["columns"].items()}


def test_types_from_iceberg_metadata_else_inferred_else_unknown(example: Path) -> None:
    warehouse = example / "warehouse"
    _table(
        warehouse,
        Relation("lw", "ods", "impressions"),
        {"user_id": StringType(), "item_id": StringType(), "imp_cnt": LongType()},
    )
    detail = {
        "order_id": LongType(),
        "product_type": StringType(),
        "plat_name": StringType(),
        "ref_id": LongType(),
        "start_city_name": StringType(),
        "end_city_name": StringType(),
        "create_time": TimestampType(),
        "order_status": LongType(),  # not the model's CAST(... AS INT): the stored type wins
        "binlog_time": TimestampType(),
        "__lw_v_binlog_time": LongType(),  # lakewide's hidden column: not shown
    }
    _table(warehouse, Relation("lw", "analytics", "order_detail"), detail)
    manifest = manifest_of(example)
    docs = build_documents(manifest, metadata_reader(manifest.output))
    sources, models = docs.catalog["sources"], docs.catalog["nodes"]

    assert _types(sources["source.lakewide.ods.impressions"]) == {
        "user_id": ("string", "iceberg"),
        "item_id": ("string", "iceberg"),
        "imp_cnt": ("long", "iceberg"),
    }
    assert sources["source.lakewide.ods.clicks"]["exists"] is False
    stored = _types(models["model.lakewide.order_detail"])
    assert stored == {c: (str(t), "iceberg") for c, t in detail.items() if not c.startswith("__")}
    # downstream of a stored table: inferred from its stored types
    assert _types(models["model.lakewide.order_status_counts"]) == {
        "order_status": ("BIGINT", "inferred"),
        "orders": ("BIGINT", "inferred"),
    }
    wide = _types(models["model.lakewide.user_rec_wide"])
    # recommendations (branch 1) has no table: the key's type is not known
    assert wide["user_id"] == (None, "unknown")
    # CAST(NULL AS INT) in branches 1 and 3, a long from impressions: the union widens
    assert wide["imp_cnt"] == ("BIGINT", "inferred")
    assert wide["rec_score"] == (None, "unknown")  # only recommendations owns it
    activity = _types(models["model.lakewide.user_activity"])
    assert activity["user_id"] == (None, "unknown")  # user_events has no table
    # the aggregation engine's folds: SUM widens `1 AS events` to BIGINT, bool_or keeps BOOLEAN
    assert activity["events"] == ("BIGINT", "inferred")
    assert activity["total_amount"] == ("DOUBLE", "inferred")
    assert activity["used_mobile"] == ("BOOLEAN", "inferred")


def test_owners_lineage_feeds_and_descriptions_in_the_manifest(example: Path) -> None:
    sources = example / "models" / "sources.yml"
    sources.write_text(
        sources.read_text()
        .replace("    schema: ods\n", "    schema: ods\n    description: the seeds\n")
        .replace(
            "      - name: impressions\n",
            "      - name: impressions\n        description: ad views\n"
            "        columns: [{name: imp_cnt, description: views per item}]\n",
        )
    )
    manifest = manifest_of(example)
    docs = build_documents(manifest, None).manifest
    wide = docs["nodes"]["model.lakewide.user_rec_wide"]
    imp_cnt = wide["columns"]["imp_cnt"]
    assert [o["unique_id"] for o in imp_cnt["owners"]] == ["source.lakewide.ods.impressions"]
    assert [(r["unique_id"], r["column"]) for r in imp_cnt["lineage"]["sources"]] == [
        ("source.lakewide.ods.impressions", "imp_cnt")
    ]
    impressions = docs["sources"]["source.lakewide.ods.impressions"]
    assert impressions["columns"]["imp_cnt"] == {
        "name": "imp_cnt",
        "description": "views per item",
        "feeds": [{"unique_id": "model.lakewide.user_rec_wide", "column": "imp_cnt"}],
    }
    assert impressions["description"] == "ad views"
    assert docs["sources"]["source.lakewide.ods.clicks"]["description"] == "the seeds"
    assert docs["child_map"]["model.lakewide.order_detail"] == [
        "model.lakewide.order_status_counts"
    ]
    activity = docs["nodes"]["model.lakewide.user_activity"]["columns"]
    assert {c: activity[c]["merge"] for c in ("user_id", "events", "pages", "event_time")} == {
        "user_id": "primary key",
        "events": "sum",
        "pages": "listagg",
        "event_time": "sequence field",
    }
    assert wide["columns"]["imp_cnt"]["merge"] == "last_non_null_value"  # partial update
    counts = docs["nodes"]["model.lakewide.order_status_counts"]
    assert counts["columns"]["order_status"]["owners"] is None  # a table: no owning branches
    assert counts["columns"]["order_status"]["merge"] is None
    assert set(wide["compiled_files"]) == {
        "bootstrap.sql",
        "merge_01_recommendations.sql",
        "merge_02_impressions.sql",
        "merge_03_clicks.sql",
        "merge_all.sql",
    }


def test_generate_writes_the_page_and_both_documents(example: Path) -> None:
    model = example / "models" / "wide" / "user_rec_wide.sql"
    tricky = "wide </script><b>x</b> & 'quotes' \u2028"
    model.write_text(
        model.read_text().replace("tags=['wide']", f"tags=['wide'], description={tricky!r}")
    )
    result = CliRunner().invoke(cli, ["--project-dir", str(example), "docs", "generate"])
    assert result.exit_code == 0, result.output
    folder = example / "target" / "docs"
    manifest = json.loads((folder / "manifest.json").read_text())
    catalog = json.loads((folder / "catalog.json").read_text())
    page = (folder / "index.html").read_text()
    embedded = {
        name: json.loads(text)
        for name, text in re.findall(
            r'<script type="application/json" id="lw-(\w+)">(.*?)</script>', page, re.S
        )
    }
    assert embedded == {"manifest": manifest, "catalog": catalog}
    assert manifest["nodes"]["model.lakewide.user_rec_wide"]["description"] == tricky
    assert "docs for 5 model(s) and 6 source(s)" in result.output


def test_serve_without_a_generated_site_exits_2(example: Path) -> None:
    result = CliRunner().invoke(cli, ["--project-dir", str(example), "docs", "serve"])
    assert result.exit_code != 0 and "lakewide docs generate" in str(result.exception)


def test_serve_serves_the_generated_site(example: Path) -> None:
    CliRunner().invoke(cli, ["--project-dir", str(example), "docs", "generate"])
    server = subprocess.Popen(
        [sys.executable, "-m", "lakewide", "--project-dir", str(example)]
        + ["docs", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://\S+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0) + "manifest.json", timeout=10) as response:
            served = response.read()
        assert served == (example / "target" / "docs" / "manifest.json").read_bytes()
        port = url.group(0).rstrip("/").rsplit(":", 1)[1]
        taken = CliRunner().invoke(
            cli, ["--project-dir", str(example), "docs", "serve", "--port", port]
        )
        assert f"cannot serve on 127.0.0.1:{port}" in str(taken.exception)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_model_that_does_not_compile_is_documented_with_its_problem(example: Path) -> None:
    broken = example / "models" / "wide" / "user_rec_wide.sql"
    broken.write_text(broken.read_text().replace(", click_cnt\nFROM", "\nFROM"))
    result = CliRunner().invoke(cli, ["--project-dir", str(example), "docs", "generate"])
    assert result.exit_code == 0, result.output
    assert "warning: 1 model(s) could not be compiled or traced fully: user_rec_wide" in (
        " ".join(result.output.split())
    )
    manifest = json.loads((example / "target" / "docs" / "manifest.json").read_text())
    wide = manifest["nodes"]["model.lakewide.user_rec_wide"]
    assert wide["compiled_files"] == {} and "branch 3 has 4 columns" in wide["problems"][0]
    assert manifest["nodes"]["model.lakewide.order_detail"]["problems"] == []


def test_select_star_from_a_ref_is_traced_through_the_model_columns(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/sources.yml": "sources: [{name: src, tables: [{name: t}]}]\n",
            "models/a.sql": "SELECT k, x * 2 AS y FROM {{ source('src', 't') }}\n",
            "models/b.sql": "SELECT * FROM {{ ref('a') }}\n",
        },
    )
    docs = build_documents(manifest_of(root), None).manifest
    columns = docs["nodes"]["model.demo.b"]["columns"]
    assert list(columns) == ["k", "y"]
    assert [(r["unique_id"], r["column"]) for r in columns["y"]["lineage"]["sources"]] == [
        ("source.demo.src.t", "x")
    ]
    assert [(r["unique_id"], r["column"]) for r in columns["y"]["lineage"]["direct"]] == [
        ("model.demo.a", "y")
    ]


def _yaml_entry(example: Path, model: str) -> dict:
    """The model's ``models:`` entry as the YAML file says it (the oracle)."""
    data = yaml.safe_load((example / "models" / "wide" / "wide.yml").read_text())
    return next(m for m in data["models"] if m["name"] == model)


def test_yaml_descriptions_and_data_tests_reach_manifest_json(example: Path) -> None:
    result = CliRunner().invoke(cli, ["--project-dir", str(example), "docs", "generate"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((example / "target" / "docs" / "manifest.json").read_text())
    node = manifest["nodes"]["model.lakewide.user_rec_wide"]
    entry = _yaml_entry(example, "user_rec_wide")
    assert node["description"] == entry["description"]
    for column in entry["columns"]:
        assert node["columns"][column["name"]]["description"] == column["description"]
    declared = {
        (next(iter(t)) if isinstance(t, dict) else t, c["name"])
        for c in entry["columns"]
        for t in c.get("data_tests", [])
    }
    shown = {(t["test"], t["column"]) for t in node["tests"]}
    assert declared <= shown
    assert ("unique", "user_id, item_id") in shown  # the key test every primary-key model gets
    assert all(t["compiled_code"] and t["severity"] == "error" for t in node["tests"])
    # a model-level test and a column test without description: order_detail
    detail = manifest["nodes"]["model.lakewide.order_detail"]
    assert ("expression_is_true", None) in {(t["test"], t["column"]) for t in detail["tests"]}
    assert detail["columns"]["product_type"]["description"] is None


def test_a_yaml_column_the_query_does_not_give_is_still_shown(example: Path) -> None:
    yml = example / "models" / "wide" / "wide.yml"
    yml.write_text(
        yml.read_text().replace(
            "      - name: click_cnt\n",
            "      - name: ghost\n        description: not in the query\n      - name: click_cnt\n",
        )
    )
    docs = build_documents(manifest_of(example), None).manifest
    ghost = docs["nodes"]["model.lakewide.user_rec_wide"]["columns"]["ghost"]
    assert ghost["description"] == "not in the query" and ghost["lineage"] is None

"""The run workflow on real Spark, the CLI in-process on the test session: --threads, JSON
logs, --fail-fast, retry, diff."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import REPO, copy_project, null_first
from tests.support.project_factory import make_project

pytestmark = [pytest.mark.spark]

CLI = Callable[..., tuple[int, str]]


def json_lines(out: str) -> list[dict[str, Any]]:
    """Every stdout line parsed as JSON (fails on any line that is not)."""
    return [json.loads(line) for line in out.splitlines()]


def results(project: Path) -> dict[str, dict[str, Any]]:
    document = json.loads((project / "target" / "run_results.json").read_text())
    return {r["name"]: r for r in document["results"]}


@pytest.mark.slow
def test_threads_and_json_logs(tmp_path: Path, spark: Any, warehouse: Path, cli: CLI) -> None:
    """The example built with --threads 2 (JSON logs) and --threads 1 (text): same tables."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = copy_project(tmp_path / "one", spark, warehouse, REPO)
    two = copy_project(tmp_path / "two", spark, warehouse, REPO)
    models = sorted(p.stem for p in (one.root / "models").rglob("*.sql"))

    code, text = cli(one.root, "build", "--threads", "1")
    assert code == 0, text
    assert "Summary" in text and "source keys" in text
    assert f"Done. {len(models)} ok, 0 failed" in text
    code, out = cli(two.root, "build", "--threads", "2", "--log-format", "json")
    assert code == 0, out

    for model in models:
        assert two.rows(model) == one.rows(model), model

    events = json_lines(out)
    for event in events:
        assert set(event["info"]) >= {"name", "code", "msg", "level", "ts", "invocation_id"}
    assert len({e["info"]["invocation_id"] for e in events}) == 1
    by_name: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_name.setdefault(event["info"]["name"], []).append(event)
    assert {e["info"]["name"] for e in events} >= {
        "Note",  # the seeds' lines
        "NodeStart",
        "SQLQuery",
        "NodeFinished",
        "LogModelResult",
        "StatsLine",
    }
    started = {e["data"]["node_info"]["unique_id"] for e in by_name["NodeStart"]}
    assert started == {f"model.lakewide.{m}" for m in models}
    statements = {
        e["data"]["node_info"]["node_name"] for e in by_name["SQLQuery"] if "node_info" in e["data"]
    }
    assert statements == set(models)  # a model's statements are told with it (seeds' without)
    finished = {
        e["data"]["node_info"]["node_name"]: e["data"]["node_info"]["node_status"]
        for e in by_name["LogModelResult"]
    }
    assert finished == dict.fromkeys(models, "success")
    stats = [e for e in events if e["info"]["name"] == "StatsLine"]  # build's tests report after
    count = len(models)
    assert [e["data"] for e in stats] == [{"ok": count, "error": 0, "skip": 0, "total": count}]

    # with two threads, two independent models ran at once
    spans: dict[str, list[str]] = {}
    for event in by_name["NodeStart"] + by_name["NodeFinished"]:
        spans.setdefault(event["data"]["node_info"]["node_name"], []).append(event["info"]["ts"])
    overlapping = [
        (x, y)
        for x in spans
        for y in spans
        if x < y and spans[x][0] < spans[y][1] and spans[y][0] < spans[x][1]
    ]
    assert overlapping, spans
    assert ("order_detail", "order_status_counts") not in overlapping  # a ref path between


FAILING = "{{ config(materialized='table') }}\nSELECT k, CAST(raise_error('boom') AS INT) AS x FROM {{ source('src', 't') }}\n"
FIXED = "{{ config(materialized='table') }}\nSELECT k, k AS x FROM {{ source('src', 't') }}\n"


def test_fail_fast_and_retry(tmp_path: Path, spark: Any, warehouse: Path, cli: CLI) -> None:
    """a fails, b is independent, c reads a: --fail-fast skips b too; retry re-runs only what
    failed or was skipped, with the last run's flags."""
    namespace = f"wf_retry_{tmp_path.name[-8:].replace('-', '_')}"
    project = make_project(
        tmp_path / "p",
        {
            "profiles.yml": (
                "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
                f"      catalog_type: hadoop\n      warehouse: {warehouse}\n"
                f"      namespace: {namespace}\n"
            ),
            "models/sources.yml": (
                f"sources:\n  - name: src\n    schema: {namespace}\n    tables:\n      - name: t\n"
            ),
            "models/a.sql": FAILING,
            "models/b.sql": "{{ config(materialized='table') }}\nSELECT k FROM {{ source('src', 't') }}\n",
            "models/c.sql": "{{ config(materialized='table') }}\nSELECT k, x FROM {{ ref('a') }}\n",
        },
    )
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{namespace}")
    spark.sql(f"CREATE TABLE lw.{namespace}.t (k INT) USING iceberg")
    spark.sql(f"INSERT INTO lw.{namespace}.t VALUES (1), (2)")

    def status() -> dict[str, str]:
        return {name: r["status"] for name, r in results(project).items()}

    def snapshot(table: str) -> int:
        return spark.sql(
            f"SELECT snapshot_id FROM lw.{namespace}.{table}.snapshots "
            "ORDER BY committed_at DESC LIMIT 1"
        ).collect()[0][0]

    code, out = cli(project, "run", "--fail-fast", "--quiet")
    assert code == 1, out
    lines = out.strip().splitlines()  # --quiet: the failed model's line and the summary line
    assert len(lines) == 2 and "ERROR" in lines[0] and "boom" in lines[0], out
    assert lines[1].startswith("Done. 0 ok, 1 failed, 2 skipped")
    assert status() == {"a": "error", "b": "skipped", "c": "skipped"}
    assert results(project)["b"]["message"] == "--fail-fast: a failed"
    assert "boom" in results(project)["a"]["message"]
    assert not spark.catalog.tableExists(f"lw.{namespace}.b")

    code, out = cli(project, "run", "--threads", "2")
    assert code == 1, out
    assert status() == {"a": "error", "b": "success", "c": "skipped"}
    b_built = snapshot("b")

    (project / "models" / "a.sql").write_text(FIXED)
    code, out = cli(project, "retry")
    assert code == 0, out
    assert status() == {"a": "success", "c": "success"}  # b did not run again
    assert (
        json.loads((project / "target" / "run_results.json").read_text())["args"]["threads"] == 2
    )  # the last run's flags
    assert snapshot("b") == b_built
    assert sorted(tuple(r) for r in spark.table(f"lw.{namespace}.c").collect()) == [(1, 1), (2, 2)]

    code, out = cli(project, "retry")
    assert code == 0 and "Nothing to retry" in out, out


DIFF_MODEL = (
    "{{ config(merge_engine='partial_update', primary_key=['k']) }}\n"
    "SELECT k, v, w FROM {{ source('src', 't') }}\n"
)


def oracle(a: list[tuple], b: list[tuple], columns: list[str]) -> dict[str, int]:
    """The differences computed in Python: rows keyed by their first value."""
    rows_a, rows_b = {r[0]: r for r in a}, {r[0]: r for r in b}
    both = rows_a.keys() & rows_b.keys()
    counts = {
        "only_a": len(rows_a.keys() - rows_b.keys()),
        "only_b": len(rows_b.keys() - rows_a.keys()),
        "both": len(both),
        "rows_differing": sum(rows_a[k][1:] != rows_b[k][1:] for k in both),
    }
    for i, column in enumerate(columns, start=1):
        counts[column] = sum(rows_a[k][i] != rows_b[k][i] for k in both)
    return counts


def test_diff_between_targets_and_snapshots(
    tmp_path: Path, spark: Any, warehouse: Path, cli: CLI
) -> None:
    """Target b: the same catalog name over another warehouse (read as a second catalog)."""
    namespace = f"wf_diff_{tmp_path.name[-8:].replace('-', '_')}"
    other = tmp_path / "warehouse_b"
    profile = (
        "demo:\n  target: a\n  outputs:\n"
        f"    a:\n      catalog: lw\n      warehouse: {warehouse}\n      namespace: {namespace}\n"
        f"    b:\n      catalog: lw\n      warehouse: {other}\n      namespace: {namespace}\n"
    )
    project = make_project(
        tmp_path / "p",
        {
            "profiles.yml": profile,
            "models/sources.yml": (
                f"sources:\n  - name: src\n    schema: {namespace}\n    tables:\n      - name: t\n"
            ),
            "models/m.sql": DIFF_MODEL,
        },
    )
    spark.conf.set("spark.sql.catalog.wf_b", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.wf_b.type", "hadoop")
    spark.conf.set("spark.sql.catalog.wf_b.warehouse", str(other))
    rows_a = [(k, f"v{k}", k * 10) for k in range(1, 21)]
    rows_b = [r for r in rows_a if r[0] != 3] + [(21, "v21", 210)]
    rows_b = [
        (k, "changed" if k in (5, 7) else v, None if k == 9 else (-1 if k == 7 else w))
        for k, v, w in rows_b
    ]
    for catalog, rows in (("lw", rows_a), ("wf_b", rows_b)):
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.{namespace}")
        spark.createDataFrame(rows, "k INT, v STRING, w BIGINT").writeTo(
            f"{catalog}.{namespace}.m"
        ).using("iceberg").create()
    expected = oracle(rows_a, rows_b, ["v", "w"])
    assert expected["only_a"] and expected["only_b"] and expected["rows_differing"]

    code, out = cli(project, "--log-format", "json", "diff", "m", "-t", "a", "-t", "b")
    assert code == 1, out
    [event] = [e for e in json_lines(out) if e["info"]["name"] == "TableDiff"]
    data = event["data"]
    assert data["counts"] == expected and data["equal"] is False
    assert data["key"] == ["k"] and data["compared"] == ["v", "w"]
    assert data["samples"]["only_a"]["rows"] == [[3, "v3", 30]]
    assert data["samples"]["only_b"]["rows"] == [[21, "v21", 210]]
    assert [r[0] for r in data["samples"]["differing"]["rows"]] == [5, 7, 9]

    # equal tables: exit 0, nothing differs
    spark.sql(f"INSERT OVERWRITE wf_b.{namespace}.m SELECT * FROM lw.{namespace}.m")
    code, out = cli(project, "diff", "m", "--target", "a", "--target", "b")
    assert code == 0, out
    assert "equal (0 only in a, 0 only in b, 20 in both, 0 of them differing)" in out

    # two snapshots of one table (a tag, then the current table), keyed by --key
    spark.sql(f"ALTER TABLE lw.{namespace}.m CREATE TAG before_more")
    more = [(k, f"v{k}", k * 10) for k in (22, 23)]
    spark.createDataFrame(more, "k INT, v STRING, w BIGINT").writeTo(f"lw.{namespace}.m").append()
    current = sorted((tuple(r) for r in spark.table(f"lw.{namespace}.m").collect()), key=null_first)
    code, out = cli(
        project, "--log-format", "json", "diff", "m", "--snapshot", "before_more", "--key", "k"
    )
    assert code == 1, out
    [event] = [e for e in json_lines(out) if e["info"]["name"] == "TableDiff"]
    assert event["data"]["counts"] == oracle(rows_a, current, ["v", "w"])
    assert event["data"]["a"] == "default target@before_more"

"""What ``lakewide compile`` writes by default (a key table's summary.md) and what it leaves
alone: a model whose fingerprint did not change since the last compile is not compiled again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakewide.project.nodes import ModelNode
from tests.support.project_factory import copy_example_project, manifest_of, run_main


@pytest.fixture()
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("LAKEWIDE_PROFILES_DIR", "LAKEWIDE_TARGET", "LAKEWIDE_WAREHOUSE"):
        monkeypatch.delenv(name, raising=False)
    return copy_example_project(tmp_path / "example")


def compile_(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], root: Path, *args: str
) -> str:
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile", *args)
    assert code == 0, output
    return output


def test_nothing_changed_ends_before_parsing_the_project(
    example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = example / "models/staging/order_status_counts.sql"
    model.write_text(model.read_text() + "-- {{ env_var('LW_NOTE', 'a') }}\n")
    monkeypatch.setenv("LW_NOTE", "secret-value")
    compile_(monkeypatch, capsys, example)
    stamp = (example / "target/.compile_inputs").read_text()
    assert '"LW_NOTE"' in stamp and "secret-value" not in stamp  # names and digests only
    kept = "nothing changed since the last compile: 5 model(s) kept"
    assert kept in compile_(monkeypatch, capsys, example)
    monkeypatch.setenv("LW_NOTE", "b")  # what env_var() read changed
    assert kept not in compile_(monkeypatch, capsys, example)
    assert kept in compile_(monkeypatch, capsys, example)
    assert kept not in compile_(monkeypatch, capsys, example, "--vars", "{x: 1}")
    assert kept in compile_(monkeypatch, capsys, example, "--vars", "{x: 1}")
    (example / "target/compiled/order_detail/summary.md").write_text("edited")  # an output
    assert kept not in compile_(monkeypatch, capsys, example, "--vars", "{x: 1}")
    assert (example / "target/compiled/order_detail/summary.md").read_text() != "edited"
    (example / "macros/new.sql").write_text("{% macro m() %}1{% endmacro %}\n")  # an input
    assert kept not in compile_(monkeypatch, capsys, example, "--vars", "{x: 1}")


def checksums(root: Path) -> dict[str, str]:
    nodes = json.loads((root / "target/manifest.json").read_text())["nodes"].values()
    return {
        n["name"]: n["compiled_checksum"]["checksum"]
        for n in nodes
        if n["resource_type"] == "model"
    }


def test_a_key_table_compiles_to_its_summary(
    example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_(monkeypatch, capsys, example)
    folder = example / "target/compiled/order_groups"
    assert {f.name for f in folder.iterdir()} == {"summary.md"}
    text = (folder / "summary.md").read_text()
    assert "partial_update table `lw.analytics.order_groups`; primary key: order_id" in text
    assert "1. order_info: lw.ods.order_info\n2. order_address: lw.ods.order_address" in text
    # one row per column: how it merges, then the sources owning it (with their expression
    # where it is not the column itself): a cell grows with the owners, not every source
    assert "| column | merge | sources (and their expression, where not the column itself) |" in (
        text
    )
    assert "| order_id | primary key | every source |" in text
    assert (
        "| start_city_name | group address_time: replaced with its group by address_time "
        "| order_address |"
    ) in text
    assert (
        "| address_time | sequence of group address_time (largest) | order_address: binlog_time |"
    ) in text
    aggregated = (example / "target/compiled/user_activity/summary.md").read_text()
    assert "| total_amount | sum | " in aggregated
    total = sum(f.stat().st_size for f in (example / "target/compiled").rglob("*") if f.is_file())
    assert total < 40_000  # every plan of the example project was ~10 times more


def test_an_unchanged_model_is_not_compiled_again(
    example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = compile_(monkeypatch, capsys, example)
    assert "compiled order_detail (primary_key)" in first
    before = checksums(example)
    second = compile_(monkeypatch, capsys, example, "--vars", "{y: 2}")  # the vars changed
    assert "5 model(s) unchanged since the last compile: kept" in second
    assert "compiled order_detail" not in second and "compiled user_activity" not in second
    assert checksums(example) == before
    # one model edited: it alone is compiled again
    model = example / "models/wide/user_activity.sql"
    model.write_text(model.read_text().replace("SELECT", "SELECT /* edited */", 1))
    third = compile_(monkeypatch, capsys, example)
    assert "4 model(s) unchanged" in third
    compiled = [line.split()[1] for line in third.splitlines() if line.startswith("compiled ")]
    assert compiled == ["user_activity"]
    assert "26 data test(s) unchanged since the last compile: kept" in third
    # a summary edited by hand is written again; --all-plans writes every plan
    summary = example / "target/compiled/order_detail/summary.md"
    summary.write_text("edited")
    query = example / "target/compiled/tests/unique_order_detail_order_id.sql"
    query.write_text("edited")
    fourth = compile_(monkeypatch, capsys, example)
    assert "compiled order_detail" in fourth and summary.read_text().startswith("# order_detail")
    assert "compiled 26 data test(s)" in fourth and "order_id" in query.read_text()
    compile_(monkeypatch, capsys, example, "--all-plans")
    assert (summary.parent / "plans/incremental_all_merge.sql").is_file()
    fifth = compile_(monkeypatch, capsys, example)  # back to the default: the plans go
    assert "compiled order_detail" in fifth
    assert {f.name for f in summary.parent.iterdir()} == {"summary.md"}
    assert checksums(example) == {**before, "user_activity": checksums(example)["user_activity"]}


def test_a_run_parses_only_the_models_that_changed_before_spark(
    example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``runnable`` (every running command's check before Spark) trusts manifest.json's
    fingerprints: a model that compiled from the same inputs is not parsed again."""
    from lakewide.commands.services.context import runnable
    from lakewide.compiler.model import wide_model

    compile_(monkeypatch, capsys, example)
    model = example / "models/wide/user_activity.sql"
    model.write_text(model.read_text().replace("SELECT", "SELECT /* edited */", 1))
    parsed: list[str] = []
    parse = wide_model.parse_model_sql

    def counted(node: ModelNode, *, widen: bool = True) -> object:
        parsed.append(node.name)
        return parse(node, widen=widen)

    monkeypatch.setattr(wide_model, "parse_model_sql", counted)
    manifest = manifest_of(example)
    assert runnable(manifest, list(manifest.models)) == list(manifest.models)
    assert parsed == ["user_activity"]

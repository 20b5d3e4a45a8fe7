"""Model unit tests on real Spark: the example's, a sequence-group model's, a failing one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lakewide.commands.output.progress import RunProgress
from lakewide.run.testing.unit_tests import load_unit_tests
from lakewide.run.testing.unit_tests.runner import run_unit_tests
from lakewide.spark.adapter import SparkAdapter
from lakewide.vocabulary import events
from tests.run.testing.unit_tests.projects import group_project
from tests.support.project_factory import copy_example_project, make_project, manifest_of, run_main

pytestmark = pytest.mark.spark


def test_example_unit_tests_pass_without_touching_the_warehouse(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    session_adapter: None,
) -> None:
    root = copy_example_project(tmp_path / "example")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "unit-test")
    assert code == 0, output
    passed = [line.split()[1] for line in output.splitlines() if line.startswith("PASS")]
    assert sorted(passed) == sorted(t.name for t in load_unit_tests(manifest_of(root)))
    assert len(passed) >= 5
    assert f"Done. {len(passed)} passed, 0 failed, 0 error(s)." in output
    assert not (root / "warehouse").exists()


def test_sequence_groups_pinned_and_a_wrong_expectation_fails_with_a_diff(
    tmp_path: Path, spark: Any
) -> None:
    root = make_project(tmp_path, group_project())
    manifest = manifest_of(root)
    tests = load_unit_tests(manifest)
    results = run_unit_tests(manifest, SparkAdapter(manifest.output, spark=spark), tests)
    by_name = {r.name: r for r in results}
    assert {r.model for r in results} == {"m", "v", "t"}
    assert by_name["view_filters"].status == "pass", by_name["view_filters"].message
    assert by_name["table_over_a_view"].status == "pass", by_name["table_over_a_view"].message
    assert by_name["late_record_keeps_the_newer_group"].status == "pass", by_name[
        "late_record_keeps_the_newer_group"
    ].message
    incremental = by_name["incremental_late_record_keeps_the_stored_group"]
    assert (incremental.status, incremental.plan) == ("pass", "incremental"), incremental.message
    empty = by_name["incremental_plan_into_an_empty_table"]
    assert (empty.status, empty.plan) == ("pass", "incremental"), empty.message
    wrong = by_name["wrong_expectation"]
    assert wrong.status == "fail"
    lines = wrong.message.splitlines()
    assert lines[0].startswith("1 expected row(s) missing, 1 unexpected row(s) (1 row(s) produced)")
    assert [line.split() for line in lines[1:]] == [
        ["k", "|", "a", "|", "b"],
        ["+", "1", "|", "new", "|", "new"],
        ["-", "1", "|", "old", "|", "NULL"],
    ]
    assert not (root / "warehouse").exists()


def test_failing_unit_test_exits_1_and_prints_the_rows(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    session_adapter: None,
) -> None:
    root = make_project(tmp_path, group_project())
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(root), "unit-test", "-s", "wrong_expectation"
    )
    assert code == 1, output
    assert "FAIL  wrong_expectation" in output
    assert "- 1 | old | NULL" in output
    assert "+ 1 | new | new" in output
    assert "Done. 0 passed, 1 failed, 0 error(s)." in output


def test_a_stored_value_that_does_not_fit_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    session_adapter: None,
) -> None:
    files = group_project()
    files["models/unit_tests.yml"] = files["models/unit_tests.yml"].replace(
        "input: this\n        rows:\n          - {k: 1, a: new, b: new, g1: 2, c: x, g2: 5}",
        "input: this\n        rows:\n          - {k: 1, a: new, b: new, g1: two}",
    )
    assert "g1: two" in files["models/unit_tests.yml"]
    root = make_project(tmp_path, files)
    code, output = run_main(
        monkeypatch,
        capsys,
        "--project-dir",
        str(root),
        "unit-test",
        "-s",
        "incremental_late_record_keeps_the_stored_group",
    )
    assert code == 2, output
    assert (
        "models/unit_tests.yml: [unit_tests[1].given[0].rows[0].g1] value 'two' is not a valid bigint"
        in output
    ), output


def test_the_docs_example_passes(tmp_path: Path, spark: Any) -> None:
    """The first example of docs/how-to/unit-tests.md, added to the example project, passes."""
    page = Path(__file__).resolve().parents[4] / "docs" / "how-to" / "unit-tests.md"
    example = page.read_text().split("```yaml\n", 1)[1].split("```", 1)[0]
    root = copy_example_project(tmp_path / "example")
    (root / "models" / "readme_unit.yml").write_text(example)
    manifest = manifest_of(root)
    tests = [t for t in load_unit_tests(manifest) if t.path.name == "readme_unit.yml"]
    assert [t.plan for t in tests] == ["incremental"]
    [result] = run_unit_tests(manifest, SparkAdapter(manifest.output, spark=spark), tests)
    assert result.status == "pass", result.message


def test_the_examples_group_tests_fail_without_sequence_groups(tmp_path: Path, spark: Any) -> None:
    """The example's order_groups unit tests pin sequence-group behaviour: the same model as a
    plain partial update (arrival order, a NULL never overwrites) fails both."""
    root = copy_example_project(tmp_path / "example")
    model = root / "models" / "wide" / "order_groups.sql"
    text = model.read_text()
    model.write_text(text[: text.index("sequence_groups=")] + text[text.index("tags=") :])
    manifest = manifest_of(root)
    assert not manifest.models["order_groups"].config.sequence_groups
    tests = [t for t in load_unit_tests(manifest) if t.model == "order_groups"]
    results = run_unit_tests(manifest, SparkAdapter(manifest.output, spark=spark), tests)
    assert [(r.plan, r.status) for r in results] == [("bootstrap", "fail"), ("incremental", "fail")]
    assert all("| web " in r.message for r in results)  # the older record won


def test_bootstrap_tests_run_inline_and_show_as_unit_tests(tmp_path: Path, spark: Any) -> None:
    """A bootstrap test reads its given rows inline (no table created or written, as dbt's
    unit tests run); an incremental one needs Iceberg tables. Both show as ``UNIT <test>``
    in the live progress of the model they run before."""
    root = make_project(tmp_path, group_project())
    manifest = manifest_of(root)
    tests = {t.name: t for t in load_unit_tests(manifest)}
    chosen = [tests["late_record_keeps_the_newer_group"], tests["table_over_a_view"]]
    chosen.append(tests["incremental_plan_into_an_empty_table"])
    progress = RunProgress(1)
    statements: list[tuple[str, str, str]] = []  # (label shown, test, statement)

    def seen(event: events.Event) -> None:
        if event.name == "SQLQuery" and event.node == "m":
            label = progress.running["m"][2]
            statements.append((label, label.partition(" ")[2], event.msg.upper()))

    with events.listening(progress), events.listening(seen), events.running("m"):
        events.emit("NodeStart", "START m")
        results = run_unit_tests(manifest, SparkAdapter(manifest.output, spark=spark), chosen)
        events.emit("SQLQuery", "the model's own statement")
    assert [r.status for r in results] == ["pass"] * 3, [r.message for r in results]
    writes = ("CREATE TABLE", "CREATE OR REPLACE TABLE", "INSERT", "MERGE")
    by_test: dict[str, list[str]] = {}
    for label, test, statement in statements:
        by_test.setdefault(test, []).append(statement)
        assert label.startswith("UNIT ") or statement == "THE MODEL'S OWN STATEMENT"
    for name in ("late_record_keeps_the_newer_group", "table_over_a_view"):
        assert by_test[name], name
        assert not [s for s in by_test[name] if s.lstrip().startswith(writes)], by_test[name]
    assert any(
        s.lstrip().startswith("CREATE TABLE")
        for s in by_test["incremental_plan_into_an_empty_table"]
    )
    assert statements[-1][0] == "RUN"  # after the unit tests, the model's own line again
    rendered = Console(width=200, record=True)
    progress.running["m"] = (progress.running["m"][0], "", "UNIT late_record_keeps_the_newer_group")
    rendered.print(progress.render())
    assert "UNIT  m late_record_keeps_the_newer_group" in rendered.export_text()


def test_an_expect_column_named_in_one_row_is_compared_in_every_row(
    tmp_path: Path, spark: Any
) -> None:
    root = make_project(tmp_path, group_project())
    manifest = manifest_of(root)
    [test] = [
        t for t in load_unit_tests(manifest) if t.name == "expect_rows_name_different_columns"
    ]
    [result] = run_unit_tests(manifest, SparkAdapter(manifest.output, spark=spark), [test])
    assert result.status == "fail"
    lines = result.message.splitlines()
    assert [line.split() for line in lines[1:4]] == [
        ["k", "|", "a", "|", "b"],
        ["-", "2", "|", "z", "|", "NULL"],
        ["+", "2", "|", "z", "|", "w"],
    ]
    assert "every column named in any expect row is compared in every row" in lines[-1]
    assert "rows[1] (b)" in lines[-1]

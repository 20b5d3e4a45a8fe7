"""The command line without a JVM: init, compile, ls, and the exit codes of errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import lakewide
from lakewide.cli import cli
from tests.support.project_factory import REPO_ROOT, copy_example_project, run_main

# what `compile --all-plans` writes for each key table (by default: its summary.md alone)
PK_MODELS = {
    "order_detail": {
        "bootstrap.sql",
        "merge_01_order_info.sql",
        "merge_02_order_address.sql",
        "merge_all.sql",
        "plans",
        "summary.md",
    },
    "order_groups": {
        "bootstrap.sql",
        "merge_01_order_info.sql",
        "merge_02_order_address.sql",
        "merge_all.sql",
        "plans",
        "summary.md",
    },
    "user_activity": {"bootstrap.sql", "merge_01_user_events.sql", "plans", "summary.md"},
    "user_rec_wide": {
        "bootstrap.sql",
        "merge_01_recommendations.sql",
        "merge_02_impressions.sql",
        "merge_03_clicks.sql",
        "merge_all.sql",
        "plans",
        "summary.md",
    },
}


@pytest.fixture(autouse=True)
def _no_outside_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKEWIDE_PROFILES_DIR", raising=False)
    monkeypatch.delenv("LAKEWIDE_TARGET", raising=False)
    monkeypatch.delenv("LAKEWIDE_WAREHOUSE", raising=False)


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    return copy_example_project(tmp_path / "example")


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def compiled_files(root: Path) -> dict[str, set[str]]:
    out = root / "target" / "compiled"
    return {d.name: {f.name for f in d.iterdir()} for d in out.iterdir()}


# ---------------------------------------------------------------- init


def test_init_creates_a_project_that_compiles(tmp_path: Path) -> None:
    project = tmp_path / "my-shop"
    result = invoke("init", str(project))
    assert result.exit_code == 0, result.output
    for relative in (
        "pyproject.toml",
        "profiles.yml",
        "models/sources.yml",
        "models/customer_wide.sql",
        "seeds/profiles.csv",
        "seeds/orders.csv",
    ):
        assert (project / relative).is_file(), relative
    assert 'profile = "my_shop"' in (project / "pyproject.toml").read_text()

    result = invoke("--project-dir", str(project), "compile")
    assert result.exit_code == 0, result.output
    tests = {"unique_customer_wide_customer_id.sql", "not_null_customer_wide_customer_id.sql"}
    # by default, the key table's summary; and its implied data tests
    assert compiled_files(project) == {"customer_wide": {"summary.md"}, "tests": tests}
    result = invoke("--project-dir", str(project), "compile", "--all-plans")
    assert result.exit_code == 0, result.output
    assert compiled_files(project) == {
        "customer_wide": {
            "bootstrap.sql",
            "merge_01_profiles.sql",
            "merge_02_orders.sql",
            "merge_all.sql",
            "plans",
            "summary.md",
        },
        "tests": tests,
    }
    bootstrap = (project / "target/compiled/customer_wide/bootstrap.sql").read_text()
    assert "CREATE TABLE lw.analytics.customer_wide" in bootstrap
    assert "lw.raw.profiles" in bootstrap and "lw.raw.orders" in bootstrap


def test_init_refuses_an_existing_project(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], example: Path
) -> None:
    before = (example / "pyproject.toml").read_text()
    code, output = run_main(monkeypatch, capsys, "init", str(example))
    assert code == 2
    assert "already has a pyproject.toml" in output
    assert (example / "pyproject.toml").read_text() == before


# ---------------------------------------------------------------- compile and ls


def test_compile_example_project_writes_bootstrap_and_merges(example: Path) -> None:
    result = invoke("--project-dir", str(example), "compile", "--all-plans")
    assert result.exit_code == 0, result.output
    files = compiled_files(example)
    assert {k: v for k, v in files.items() if k in PK_MODELS} == PK_MODELS
    # a plain table: one CREATE OR REPLACE, and its plans (pinned reads, then the statement)
    assert files["order_status_counts"] == {"table.sql", "plans"}
    compiled = example / "target" / "compiled"
    # every plan a run can take, changelog reads included
    plans = {f.name for f in (compiled / "order_detail/plans").iterdir()}
    for mode in ("incremental", "full", "changelog", "empty"):
        assert f"incremental_02_order_address_read_{mode}.sql" in plans
    assert {
        "bootstrap.sql",
        "full_refresh.sql",
        "incremental_all_merge.sql",
        "incremental_01_order_info_merge.sql",
        "incremental_01_order_info_merge_changelog.sql",
    } <= plans
    read = compiled / "order_detail/plans/incremental_02_order_address_read_changelog.sql"
    assert "-- read __lw_new_2 := lw.ods.order_address changelog after" in read.read_text()
    merge_all = (compiled / "order_detail/plans/incremental_all_merge.sql").read_text()
    assert "FROM __lw_new_1" in merge_all and "FROM __lw_new_2" in merge_all
    assert "-- commit to the table, with the offsets" in merge_all
    assert (
        "CREATE TABLE lw.analytics.order_detail"
        in (compiled / "order_detail/bootstrap.sql").read_text()
    )
    merge = (compiled / "order_detail/merge_02_order_address.sql").read_text()
    assert "CREATE OR REPLACE TEMPORARY VIEW" in merge
    assert "MERGE INTO lw.analytics.order_detail" in merge
    assert "lw.ods.order_address" in merge and "lw.ods.order_info" not in merge
    table_sql = (compiled / "order_status_counts/table.sql").read_text()
    assert "CREATE OR REPLACE TABLE lw.analytics.order_status_counts" in table_sql
    assert "FROM lw.analytics.order_detail" in table_sql
    assert "compiled order_detail (primary_key)" in result.output


def test_compile_select_and_stale_files(example: Path) -> None:
    stale = example / "target/compiled/order_detail/merge_09_gone.sql"
    (stale.parent / "old_folder").mkdir(parents=True)
    stale.write_text("old")
    (stale.parent / "bootstrap.sql").write_text("old")
    result = invoke("--project-dir", str(example), "compile", "-s", "order_detail")
    assert result.exit_code == 0, result.output
    files = compiled_files(example)
    assert {k: v for k, v in files.items() if k != "tests"} == {"order_detail": {"summary.md"}}
    assert "unique_order_detail_order_id.sql" in files["tests"]
    assert not any("user_rec_wide" in name for name in files["tests"])
    stale.write_text("old")
    result = invoke("--project-dir", str(example), "compile", "-s", "order_detail", "--all-plans")
    assert result.exit_code == 0, result.output
    assert compiled_files(example)["order_detail"] == PK_MODELS["order_detail"]
    assert (stale.parent / "bootstrap.sql").read_text().startswith("CREATE TABLE")


def test_compile_exclude_by_tag(example: Path) -> None:
    result = invoke("--project-dir", str(example), "compile", "--exclude", "tag:wide")
    assert result.exit_code == 0, result.output
    assert set(compiled_files(example)) == {"order_status_counts", "tests"}


def test_ls_lists_models_in_run_order(example: Path) -> None:
    result = invoke("--project-dir", str(example), "ls")
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines() if line.strip()]
    assert rows == [
        [
            "order_detail",
            "partial_update",
            "lw.analytics.order_detail",
            "models/wide/order_detail.sql",
        ],
        [
            "order_groups",
            "partial_update",
            "lw.analytics.order_groups",
            "models/wide/order_groups.sql",
        ],
        [
            "order_status_counts",
            "table",
            "lw.analytics.order_status_counts",
            "models/staging/order_status_counts.sql",
        ],
        [
            "user_activity",
            "aggregation",
            "lw.analytics.user_activity",
            "models/wide/user_activity.sql",
        ],
        [
            "user_rec_wide",
            "partial_update",
            "lw.analytics.user_rec_wide",
            "models/wide/user_rec_wide.sql",
        ],
    ]


def test_ls_upstream_selector(example: Path) -> None:
    result = invoke("--project-dir", str(example), "ls", "-s", "+order_status_counts")
    assert [line.split()[0] for line in result.output.splitlines()] == [
        "order_detail",
        "order_status_counts",
    ]


def test_target_and_vars_options_are_used(example: Path) -> None:
    (example / "models/staging/order_status_counts.sql").write_text(
        "{{ config(materialized='table') }}\nSELECT {{ var('n') }} AS n"
    )
    (example / "models/staging/unit_tests.yml").unlink()  # they test the model replaced here
    result = invoke(
        "--project-dir", str(example), "--vars", "{n: 42}", "compile", "-s", "order_status_counts"
    )
    assert result.exit_code == 0, result.output
    text = (example / "target/compiled/order_status_counts/table.sql").read_text()
    assert "42 AS n" in text


# ---------------------------------------------------------------- exit codes


def test_bad_config_key_exits_2_naming_file_and_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], example: Path
) -> None:
    (example / "models/staging/order_status_counts.sql").write_text(
        "-- counts\n{{ config(materialized='table', primay_key='order_status') }}\nSELECT 1 AS x\n"
    )
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(example), "compile")
    assert code == 2
    assert "models/staging/order_status_counts.sql:2" in output
    assert "unknown config key 'primay_key'" in output
    assert "Did you mean 'primary_key'?" in output
    assert not (example / "target/compiled").exists()  # nothing compiled before the error


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            "{{ config(primay_key='order_status') }}\nSELECT 1 AS x\n",
            "models/staging/order_status_counts.sql:1: [primay_key] unknown config key",
        ),
        ("SELECT {{ var('day') }} AS d\n", "set it in [tool.lakewide.vars] or with --vars"),
    ],
    ids=["key-prefix", "var-hint"],
)
def test_error_output_keeps_bracketed_text(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    example: Path,
    model: str,
    expected: str,
) -> None:
    (example / "models/staging/order_status_counts.sql").write_text(model)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(example), "compile")
    assert code == 2
    assert expected in output


def test_unknown_selector_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], example: Path
) -> None:
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(example), "compile", "-s", "order_detial"
    )
    assert code == 2
    assert "selector 'order_detial' matches no model" in output
    assert "order_detail, order_groups, order_status_counts, user_activity, user_rec_wide" in output


def test_compile_error_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], example: Path
) -> None:
    path = example / "models/wide/order_detail.sql"
    path.write_text(path.read_text().replace("UNION ALL", "UNION"))
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(example), "compile")
    assert code == 2
    assert "order_detail.sql" in output and "write UNION ALL" in output


def test_missing_project_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(tmp_path), "ls")
    assert code == 2
    assert "no pyproject.toml" in output


def test_click_usage_errors_exit_2(example: Path) -> None:
    assert CliRunner().invoke(cli, ["compile", "--no-such-option"]).exit_code == 2
    assert CliRunner().invoke(cli, ["no-such-command"]).exit_code == 2


def test_usage_errors_through_main_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run_main(monkeypatch, capsys, "no-such-command")
    assert code == 2 and "no-such-command" in output
    code, output = run_main(monkeypatch, capsys, "--vars", "[1, 2]", "ls")
    assert code == 2 and "expected a YAML mapping" in output


def test_version_and_help_exit_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run_main(monkeypatch, capsys, "--version")
    assert code == 0 and lakewide.__version__ in output
    code, output = run_main(monkeypatch, capsys, "--help")
    assert code == 0 and "compile" in output and "init" in output


# ---------------------------------------------------------------- no JVM, no pyspark


def test_compile_subprocess_needs_neither_java_nor_pyspark(tmp_path: Path) -> None:
    project = copy_example_project(tmp_path / "example")
    fake = tmp_path / "fake_site" / "pyspark"
    fake.mkdir(parents=True)
    marker = tmp_path / "pyspark_was_imported"
    (fake / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "raise ImportError('pyspark must not be imported by compile')\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LAKEWIDE_PROFILES_DIR", "LAKEWIDE_TARGET", "LAKEWIDE_WAREHOUSE")
    }
    env["JAVA_HOME"] = "/nonexistent"
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(fake.parent), str(REPO_ROOT), env.get("PYTHONPATH")) if p
    )
    if (REPO_ROOT / "lakewide" / "__main__.py").is_file():
        command = [sys.executable, "-m", "lakewide", "compile", "--all-plans"]
    else:
        command = [
            *(sys.executable, "-c", "from lakewide.cli import main; main()"),
            *("compile", "--all-plans"),
        ]
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists(), "compile imported pyspark"
    files = compiled_files(project)
    assert {k: v for k, v in files.items() if k in PK_MODELS} == PK_MODELS


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["show"], "give a MODEL or --inline"),
        (["show", "order_detail", "--inline", "select 1"], "one of the two"),
        (["show", "--inline", "select * from (("], "--inline does not parse"),
        (["show", "--inline", "drop table lw.ods.clicks"], "--inline takes one query"),
        (["show", "--inline", "select * from {{ ref('nope') }}"], "no model named 'nope'"),
        (["load", "ods.clicks", "clicks.csv"], "is the table of seed seeds/clicks.csv"),
        (["load", "ods.nope", "seeds/clicks.csv"], "accepted: source.table as declared"),
    ],
)
def test_show_inline_and_load_refuse_bad_input_before_spark(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    example: Path,
    args: list[str],
    expected: str,
) -> None:
    """Checked before the warehouse is locked or Spark starts (no JVM here)."""
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(example), *args)
    assert code == 2 and expected in output and "Traceback" not in output, output
    assert not (example / "warehouse").exists()

"""Each broken project through every command that loads the project: the same clear error
(exit 2, the file and line or key named, no traceback) as ``compile``, raised before Spark
starts (a Spark start fails the test). The single-command matrix is tests/features/test_bad_inputs.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tests.support.project_factory import DEFAULT_PROFILES, make_project, run_main

GOOD = "SELECT 1 AS n\n"

#: case -> (files of the project, texts the error shows)
BROKEN: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "jinja-error-in-model": (
        {"models/m.sql": "SELECT\n  {{ 1 // 0 }} AS n\n"},
        ("models/m.sql:2:", "template failed to render: ZeroDivisionError"),
    ),
    "jinja-error-in-macro": (
        {
            "macros/boom.sql": "{% macro boom() %}\n\n  {{ 1 // 0 }}\n{% endmacro %}\n",
            "models/m.sql": "SELECT {{ boom() }} AS n\n",
        },
        ("boom.sql:3:", "template failed to render: ZeroDivisionError"),
    ),
    "jinja-error-at-macro-file-top": (
        {
            "macros/top.sql": "\n{% set half = 1 // 0 %}\n",
            "models/m.sql": GOOD,
        },
        ("top.sql:2:", "template failed to render: ZeroDivisionError"),
    ),
    "yaml-top-level-list": (
        {"models/m.sql": GOOD, "models/schema.yml": "- name: m\n"},
        ("schema.yml: expected a mapping at the top level", "models", "found list"),
    ),
    "invalid-catalog-name": (
        {
            "models/m.sql": GOOD,
            "profiles.yml": DEFAULT_PROFILES.replace("catalog: lw", "catalog: lw-x"),
        },
        ("profiles.yml: [demo.outputs.dev.catalog]", "invalid catalog name 'lw-x'"),
    ),
}

#: every command that loads the project (with what it needs to get that far)
COMMANDS = [
    ["compile"],
    ["ls"],
    ["run"],
    ["run", "--dry-run"],
    ["run", "--watch"],
    ["retry"],
    ["build"],
    ["seed"],
    ["test"],
    ["unit-test"],
    ["show", "m"],
    ["show", "--inline", "select 1"],
    ["load", "raw.t", "rows.csv"],
    ["lineage", "m"],
    ["diff", "m", "--target", "dev"],
    ["docs", "generate"],
    ["freshness"],
    ["maintain"],
    ["debug"],
]

#: the commands that run a model's SQL: a syntax error ends each as it ends compile
SQL_COMMANDS = [["compile"], ["run"], ["run", "--dry-run"], ["build"], ["retry"]]
#: what ``retry`` repeats: the last run's failed model
LAST_RUN = '{"results": [{"name": "m", "status": "error"}], "args": {}}'


@pytest.fixture(autouse=True)
def _no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each error is raised before Spark starts: starting it fails the test."""
    from lakewide.spark import runtime

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        pytest.fail("Spark started before the bad input was reported")

    monkeypatch.setattr(runtime, "create_session", refuse)
    monkeypatch.delenv("LAKEWIDE_PROFILES_DIR", raising=False)


def _assert_exit_2(code: int, output: str, expected: tuple[str, ...]) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    assert output.count("error:") == 1, output
    for text in expected:
        assert text in output, output


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_project_exits_2_in_every_command(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    case: str,
    command: list[str],
) -> None:
    files, expected = BROKEN[case]
    root = make_project(tmp_path, {**files, "target/run_results.json": LAST_RUN})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), *command)
    _assert_exit_2(code, output, expected)


@pytest.mark.parametrize("command", SQL_COMMANDS, ids=" ".join)
def test_sql_syntax_error_exits_2_in_every_command_that_runs_models(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: list[str],
) -> None:
    root = make_project(
        tmp_path,
        {
            "models/ok.sql": GOOD,
            "models/m.sql": "SELECT (1 AS n FROM\n",
            "target/run_results.json": LAST_RUN,
        },
    )
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), *command)
    _assert_exit_2(code, output, ("m.sql:1:", "SQL does not parse"))


@pytest.mark.parametrize("folder", ['we"ird', "a: b # c", "back\\slash"])
def test_init_escapes_the_folder_name(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    folder: str,
) -> None:
    root = tmp_path / folder
    code, output = run_main(monkeypatch, capsys, "init", str(root))
    assert code == 0, output
    settings = tomllib.loads((root / "pyproject.toml").read_text())
    assert settings["project"]["name"] == folder
    assert settings["tool"]["lakewide"]["profile"] == folder
    assert list(yaml.safe_load((root / "profiles.yml").read_text())) == [folder]
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile")
    assert code == 0, output

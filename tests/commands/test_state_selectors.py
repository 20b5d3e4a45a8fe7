"""``--state DIR`` and the ``state:`` selectors, without a JVM: what counts as modified, the
graph operators on them, and every bad input through every command that takes ``--state``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.artifacts.state_compare import compare, deferred_relations, load_state
from lakewide.project.graph import select
from lakewide.project.nodes import Relation
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import (
    PROD_DEV_PROFILES,
    make_project,
    manifest_of,
    production_state,
    run_main,
)

PROFILES = PROD_DEV_PROFILES + (
    "    other: {catalog: other, catalog_type: hadoop, warehouse: warehouse, namespace: dev}\n"
)

# raw -> stg -> wide -> report ; lonely
FILES = {
    "profiles.yml": PROFILES,
    "macros/pick.sql": "{% macro pick(c) %}{{ c }}{% endmacro %}",
    "models/stg.sql": "SELECT 1 AS id, 'x' AS v -- staging",
    "models/wide.sql": "{{ config(tags=['mart']) }}\nSELECT id, {{ pick('v') }} FROM {{ ref('stg') }}",
    "models/report.sql": "SELECT id FROM {{ ref('wide') }}",
    "models/lonely.sql": "SELECT 2 AS id",
}


def _production(tmp_path: Path) -> Path:
    return production_state(tmp_path, FILES)


def _sets(root: Path, tmp_path: Path, target: str = "dev") -> dict[str, frozenset[str]]:
    return compare(manifest_of(root, target=target), load_state(tmp_path / "prod-target"))


def test_another_target_is_no_change(tmp_path: Path) -> None:
    root = _production(tmp_path)
    assert all(not names for names in _sets(root, tmp_path).values())


@pytest.mark.parametrize(
    ("model", "text", "body", "configs"),
    [
        ("stg", "select 1 as id,\n  'x' as v", False, False),  # layout, case, comment
        ("stg", "SELECT 1 AS id, 'y' AS v", True, False),
        ("report", "{{ config(tags=['x']) }} SELECT id FROM {{ ref('wide') }}", False, True),
        ("macros/pick.sql", "{% macro pick(c) %}upper({{ c }}){% endmacro %}", True, False),
    ],
)
def test_what_counts_as_modified(
    tmp_path: Path, model: str, text: str, body: bool, configs: bool
) -> None:
    root = _production(tmp_path)
    path = root / (model if "/" in model else f"models/{model}.sql")
    path.write_text(text, encoding="utf-8")
    sets = _sets(root, tmp_path)
    changed = "wide" if "/" in model else model  # the macro is called by wide
    assert sets["modified.body"] == ({changed} if body else set())
    assert sets["modified.configs"] == ({changed} if configs else set())
    assert sets["modified"] == ({changed} if body or configs else set())
    assert sets["new"] == frozenset()


def test_new_model_is_new_and_modified(tmp_path: Path) -> None:
    root = _production(tmp_path)
    (root / "models/extra.sql").write_text("SELECT id FROM {{ ref('stg') }}", encoding="utf-8")
    sets = _sets(root, tmp_path)
    assert sets["new"] == {"extra"} and sets["modified"] == {"extra"}


def test_graph_operators_compose_with_state(tmp_path: Path) -> None:
    root = _production(tmp_path)
    wide = "{{ config(tags=['mart']) }} SELECT id FROM {{ ref('stg') }}"
    (root / "models/wide.sql").write_text(wide, encoding="utf-8")
    manifest = manifest_of(root, target="dev")
    state = compare(manifest, load_state(tmp_path / "prod-target"))

    def chosen(*selectors: str, exclude: tuple[str, ...] = ()) -> list[str]:
        return select(manifest.models, list(selectors), list(exclude), root, state)

    assert chosen("state:modified") == ["wide"]
    assert chosen("state:modified+") == ["wide", "report"]
    assert chosen("+state:modified") == ["stg", "wide"]
    assert chosen("+state:modified+") == ["stg", "wide", "report"]
    assert chosen("state:modified+", exclude=("report",)) == ["wide"]
    assert chosen("state:modified+,tag:mart") == ["wide"]
    assert chosen("state:new") == []  # nothing new is no error: a change may add no model
    assert chosen("state:new", "lonely") == ["lonely"]


def test_state_selectors_refuse_without_state_and_unknown_methods(tmp_path: Path) -> None:
    manifest = manifest_of(make_project(tmp_path, FILES))
    with pytest.raises(ConfigError, match=r"'state:modified\+' compares with an earlier run"):
        select(manifest.models, ["state:modified+"], None, tmp_path)
    with pytest.raises(ConfigError, match="accepted: state:new, state:modified, state:modified"):
        select(manifest.models, ["state:changed"], None, tmp_path, {})


def test_defer_maps_models_not_selected_to_the_state_tables(tmp_path: Path) -> None:
    root = _production(tmp_path)
    state = load_state(tmp_path / "prod-target")
    deferred = deferred_relations(manifest_of(root, target="dev"), state, ["wide"])
    assert deferred == {n: Relation("lw", "prod", n) for n in ("stg", "report", "lonely")}
    assert deferred_relations(manifest_of(root, target="prod"), state, ["wide"]) == {}
    with pytest.raises(ConfigError, match="in catalog lw, but this target's catalog is other"):
        deferred_relations(manifest_of(root, target="other"), state, ["wide"])


#: every command that takes --state (with what it needs to get that far)
STATE_COMMANDS = [["ls"], ["compile"], ["run"], ["build"], ["test"], ["plan"]]


def _bad_states(tmp_path: Path) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    """case -> (the options given, texts the error shows)."""
    (tmp_path / "empty").mkdir()
    old = tmp_path / "old"
    old.mkdir()
    document: dict[str, Any] = {"metadata": {"lakewide_version": "0.1.0"}, "nodes": {}}
    (old / "manifest.json").write_text(json.dumps(document), encoding="utf-8")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json", encoding="utf-8")
    accepted = "--state takes the target/ folder of an earlier lakewide run"
    return {
        "missing-dir": (["--state", str(tmp_path / "nope")], ("nope: no such directory", accepted)),
        "no-manifest": (["--state", str(tmp_path / "empty")], ("holds no manifest.json", accepted)),
        "not-json": (["--state", str(broken)], ("manifest.json is not valid JSON", accepted)),
        "old-version": (
            ["--state", str(old)],
            ("written by lakewide 0.1.0 with state_version None", "reads state_version 1"),
        ),
        "selector-without-state": (
            ["-s", "state:modified+"],
            ("'state:modified+' compares with an earlier run: give --state DIR",),
        ),
        "defer-without-state": (["--defer"], ("--defer", "give that run's target/ folder")),
    }


Cli = Callable[..., tuple[int, str]]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``lakewide ARGS`` in this process -> (exit code, output); starting Spark fails the test."""
    from lakewide.spark import runtime

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        pytest.fail("Spark started before the bad input was reported")

    monkeypatch.setattr(runtime, "create_session", refuse)
    return lambda *args: run_main(monkeypatch, capsys, *args)


@pytest.mark.parametrize("command", STATE_COMMANDS, ids=" ".join)
def test_bad_state_exits_2_in_every_command(cli: Cli, tmp_path: Path, command: list[str]) -> None:
    root = make_project(tmp_path / "project", FILES)
    for case, (given, expected) in _bad_states(tmp_path).items():
        if command == ["plan"] and case == "defer-without-state":
            expected = ("No such option '--defer'",)  # plan reads, it runs nothing to defer
        code, output = cli("--project-dir", str(root), *command, *given)
        assert code == 2, (case, output)
        assert "Traceback" not in output, (case, output)
        for text in expected:
            assert text in output, (case, output)


class _NoSpark:
    """A SparkAdapter that starts nothing (the body under test never asks it anything)."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        self.java_options: list[str] = []

    def raise_if_stopped(self, wait: float = 0.0) -> None:
        pass

    def stop(self) -> None:
        pass


def test_retry_defers_as_the_run_did(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_results.json keeps --state and --defer: retry reads the same state and defers the
    models the run did not select (the run's selection, not only the retried models)."""
    root = _production(tmp_path)
    (root / "models/wide.sql").write_text("SELECT id FROM {{ ref('stg') }}", encoding="utf-8")
    seen: list[Any] = []

    def report(manifest: Any, _adapter: Any, names: list[str], *_args: Any, **_kw: Any) -> int:
        seen.append((names, {n: str(m.relation) for n, m in manifest.models.items()}))
        return 0

    monkeypatch.setattr("lakewide.spark.adapter.SparkAdapter", _NoSpark)
    monkeypatch.setattr("lakewide.commands.retry.run_and_report", report)
    results = root / "target" / "run_results.json"
    for state, expected in ((tmp_path / "nope", 2), (tmp_path / "prod-target", 0)):
        args = {"command": "run", "select": ["state:modified+"], "exclude": [], "target": "dev"}
        document = {
            "results": [{"name": "report", "status": "error"}],
            "args": {**args, "state": str(state), "defer": True},
        }
        results.write_text(json.dumps(document), encoding="utf-8")
        code, output = cli("--project-dir", str(root), "retry")
        assert code == expected, output
        assert ("nope: no such directory" in output) == (expected == 2), output
    assert seen == [
        (
            ["report"],
            {
                "stg": "lw.prod.stg",
                "wide": "lw.dev.wide",
                "report": "lw.dev.report",
                "lonely": "lw.prod.lonely",
            },
        )
    ]

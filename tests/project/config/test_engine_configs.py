"""Merge engines: one module each owns its name, config model and traits; no other module of
lakewide writes an engine's name (it asks the engine). Pure Python, no Spark."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from lakewide.compiler.model.wide_model import analyze
from lakewide.project.config.engines.base import ENGINE_NAMES, MergeEngine
from lakewide.project.config.engines.registry import CONFIGS, ENGINES, engine_named
from lakewide.project.config.model_config import parse_model_config
from tests.compiler.fixtures import Case
from tests.compiler.test_rules import node_for

LAKEWIDE = Path(__file__).resolve().parents[3] / "lakewide"
ENGINES_PACKAGE = Path("project/config/engines")
# files (relative to lakewide/) that may write an engine name as a string literal, and why
ALLOWED: dict[str, str] = {}


def engine_name_literals(root: Path, names: tuple[str, ...]) -> list[str]:
    """``file:line: 'name'`` of every string literal equal to an engine name in the modules
    under ``root``, outside the engines package and ``ALLOWED`` (text that only mentions an
    engine, such as a message, is not a literal equal to its name)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.is_relative_to(ENGINES_PACKAGE) or str(relative) in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{relative}:{node.lineno}: {node.value!r}")
    return found


def test_no_engine_name_is_written_outside_the_engines_package() -> None:
    found = engine_name_literals(LAKEWIDE, ENGINE_NAMES)
    assert not found, (
        "ask the engine (model.engine.picks_rows, config.engine...) or take its name from "
        "lakewide.project.config.engines.registry.ENGINES instead of writing it:\n"
        + "\n".join(found)
    )


def test_the_scan_finds_a_comparison(tmp_path: Path) -> None:
    (tmp_path / "rule.py").write_text(
        'def f(model):\n    return model.engine == "first_row" or "first_row: text"\n',
        encoding="utf-8",
    )
    assert engine_name_literals(tmp_path, ENGINE_NAMES) == ["rule.py:2: 'first_row'"]


def test_every_merge_engine_value_has_one_module_whose_config_and_traits_agree() -> None:
    assert ENGINE_NAMES == get_args(MergeEngine) == tuple(ENGINES) == tuple(CONFIGS)
    for name, config in CONFIGS.items():
        assert get_args(config.model_fields["merge_engine"].annotation) == (name,)
        assert config.engine is engine_named(name) and config.engine.name == name
        assert config.__module__.endswith(f".engines.{name}")
        parsed = parse_model_config({"merge_engine": name, "primary_key": "k"}, path="m.sql")
        assert type(parsed) is config and parsed.engine is ENGINES[name]


def test_each_engine_folds_one_way() -> None:
    """Exactly one of: whole rows picked, columns updated, values aggregated."""
    for engine in ENGINES.values():
        kinds = (engine.picks_rows, engine.updates_columns, engine.aggregates_values)
        assert sum(kinds) == 1, engine
        assert not engine.keeps_first or engine.picks_rows, engine
        assert engine.keeps_last_row == (engine.picks_rows and not engine.keeps_first)
        assert not engine.takes_groups or engine.takes_aggregates, engine


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_a_wide_model_carries_its_configs_engine(name: str) -> None:
    case = Case(name, {"merge_engine": name, "primary_key": "k"}, "SELECT k, v FROM s", [])
    assert analyze(node_for(case)).engine is ENGINES[name]

"""Model kinds: ``lakewide.project.config.kinds`` owns their names; every other module asks a
kind's traits instead of comparing it with a name. Pure Python, no Spark."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lakewide.project.config.kinds import ModelKind, kind_of
from lakewide.project.config.model_config import parse_model_config

LAKEWIDE = Path(__file__).resolve().parents[3] / "lakewide"
CONFIG_PACKAGE = Path("project/config")
NAMES = {kind.value for kind in ModelKind}
# what a kind is read from: ``node.config.kind``, ``compiled.kind``, a config's ``materialized``
SUBJECTS = ("kind", "materialized")


def _constants(node: ast.expr) -> list[str]:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in NAMES]


def kind_name_comparisons(root: Path) -> list[str]:
    """``file:line: text`` of every comparison of a model kind (an expression whose source
    names ``kind`` or ``materialized``) with a kind's name, outside the config package."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.is_relative_to(CONFIG_PACKAGE):
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            subjects = [s for s in sides if any(w in ast.unparse(s) for w in SUBJECTS)]
            if subjects and any(_constants(s) for s in sides if s not in subjects):
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_compares_a_model_kind_with_its_name() -> None:
    found = kind_name_comparisons(LAKEWIDE)
    assert not found, (
        "ask the kind (node.config.kind.stores_rows, .is_key_table, ...: "
        "lakewide.project.config.kinds) instead of comparing it with a name:\n" + "\n".join(found)
    )


def test_the_scan_finds_a_comparison(tmp_path: Path) -> None:
    (tmp_path / "rule.py").write_text(
        "def f(node, step):\n"
        '    a = node.config.kind == "view" or step.kind == "expire"\n'
        '    return a or compiled.kind not in ("table", "primary_key") or "view: text"\n',
        encoding="utf-8",
    )
    assert kind_name_comparisons(tmp_path) == [
        "rule.py:2: node.config.kind == 'view'",
        "rule.py:3: compiled.kind not in ('table', 'primary_key')",
    ]


@pytest.mark.parametrize(
    ("config", "kind"),
    [
        ({}, ModelKind.TABLE),
        ({"materialized": "view"}, ModelKind.VIEW),
        ({"materialized": "table"}, ModelKind.TABLE),
        ({"merge_engine": "deduplicate", "primary_key": "id"}, ModelKind.KEY_TABLE),
        (
            {
                "materialized": "snapshot",
                "unique_key": "id",
                "strategy": "check",
                "check_cols": "all",
            },
            ModelKind.SNAPSHOT,
        ),
    ],
)
def test_a_config_gives_its_kind(config: dict, kind: ModelKind) -> None:
    parsed = parse_model_config(config, path="models/m.sql")
    assert parsed.kind is kind
    assert kind_of(config.get("materialized"), config.get("merge_engine")) is kind


def test_each_kind_has_one_identity_trait_and_its_config_word() -> None:
    traits = ("is_view", "rebuilt_each_run", "appends", "is_key_table", "keeps_versions")
    for kind in ModelKind:
        assert sum(getattr(kind, t) for t in traits) == 1
        assert kind.stores_rows is not kind.is_view
        assert f"{kind}" == str(kind) == kind.value

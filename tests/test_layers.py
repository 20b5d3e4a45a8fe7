"""The package's structure: no import circles, commands independent, few top-level modules.

The layers themselves are import-linter's contract in pyproject.toml (``lint-imports``); these
tests hold what a contract cannot say.
"""

from __future__ import annotations

import re
import sys

import grimp

from tests.support.project_factory import REPO_ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = REPO_ROOT / "lakewide"


def _graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("lakewide", cache_dir=None)
    return {
        m: {i for i in graph.find_modules_directly_imported_by(m) if i.startswith("lakewide")}
        for m in graph.modules
        if m.startswith("lakewide")
    }


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), imports made inside
    functions and under TYPE_CHECKING included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in imports.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_circles_are_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    assert circles(_graph()) == []


def test_every_command_module_is_independent_of_the_others() -> None:
    """A new command module is added to the import-linter contract that keeps commands apart."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    independent = next(c for c in contracts if c["type"] == "independence")["modules"]
    commands = {
        f"lakewide.commands.{p.stem}"
        for p in (PACKAGE / "commands").glob("*.py")
        if p.stem != "__init__"
    }
    assert commands == set(independent)


def test_few_modules_at_the_top() -> None:
    """What stays directly in lakewide/ is the CLI and the entry points; the rest lives in its
    layer (the shared words in lakewide/vocabulary/)."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "cli.py"], top


def test_layers_name_every_package() -> None:
    """Every folder of lakewide/ is a layer of the contract (or inside one)."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    named = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    folders = {f"lakewide.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders <= named, folders - named


def test_one_dialect_constant() -> None:
    """Spark SQL is named once (lakewide.vocabulary.dialect.DIALECT): no parse, type or print
    spells it."""
    spelled = re.compile(
        r"""(?:read|dialect)=["']spark["']|\.sql\(["']spark["']\)|= ["']spark["']$"""
    )
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if spelled.search(line) and path.name != "dialect.py"
    ]
    assert found == []


def test_the_architecture_page_names_every_folder() -> None:
    """docs/architecture.md is where a contributor finds a layer: every folder is on it."""
    page = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    folders = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_dir() and (p / "__init__.py").exists()
    ]
    assert [f for f in folders if f"`{f}/`" not in page] == []

"""``unit_tests:`` of ``models/**/*.yml`` (dbt 1.8's syntax): parsed and checked against the
project before anything runs. Every error names the file and the key."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field

from lakewide.project.config.specs import Strict, checked
from lakewide.project.manifest import Manifest
from lakewide.project.text_files import load_yaml, read_utf8
from lakewide.vocabulary.errors import ConfigError

THIS = "this"
PLANS = ("bootstrap", "incremental")
_REF = re.compile(r"""^ref\(\s*(['"])([^'"]+)\1\s*\)$""")
_SOURCE = re.compile(r"""^source\(\s*(['"])([^'"]+)\1\s*,\s*(['"])([^'"]+)\3\s*\)$""")


class GivenEntry(Strict):
    """One ``given:`` entry: an input of the model and its rows."""

    input: str
    rows: Any = None
    format: Literal["dict", "csv"] = "dict"


class ExpectEntry(Strict):
    """``expect:``: the model's rows after the run (only the columns named are compared)."""

    rows: Any = None
    format: Literal["dict", "csv"] = "dict"


class UnitTestEntry(Strict):
    """One ``unit_tests:`` entry."""

    name: str
    model: str
    description: str | None = None
    given: list[GivenEntry] = []
    expect: ExpectEntry
    plan: Literal["bootstrap", "incremental"] | None = None
    tags: list[str] = []
    meta: dict[str, Any] = {}
    config: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Input:
    """A given input: ``ref('x')`` (kind ``ref``, name x), ``source('a', 'b')`` (kind
    ``source``, name ``(a, b)``) or ``this``; its rows as column -> value mappings."""

    kind: str
    name: str | tuple[str, str]
    rows: list[dict[str, Any]]
    key: str  # where it is written, e.g. unit_tests[0].given[1]
    text: bool = False  # rows came as CSV text: every value is a string (or None)

    @property
    def label(self) -> str:
        if self.kind == "ref":
            return f"ref('{self.name}')"
        if self.kind == "source":
            assert isinstance(self.name, tuple)
            source, table = self.name
            return f"source('{source}', '{table}')"
        return THIS


@dataclass(frozen=True)
class UnitTest:
    """A unit test of one model, checked against the project."""

    name: str
    model: str
    path: Path
    key: str
    given: list[Input]
    expect: list[dict[str, Any]]
    plan: str  # bootstrap | incremental
    description: str | None = None
    tags: list[str] = field(default_factory=list)

    @property
    def this(self) -> Input | None:
        return next((i for i in self.given if i.kind == THIS), None)

    def error(self, message: str, key: str = "") -> ConfigError:
        """A ConfigError naming this test's file and ``key`` under it."""
        return ConfigError(message, path=self.path, key=key or self.key, model=self.model)


def load_unit_tests(manifest: Manifest) -> list[UnitTest]:
    """Every ``unit_tests:`` entry of the project's model YAML files, checked against the
    manifest: the model exists, each input is one of the model's inputs, the rows are rows."""
    project = manifest.project
    found: list[UnitTest] = []
    names: dict[str, str] = {}
    for folder in project.model_paths:
        if not folder.is_dir():
            continue
        for path in sorted([*folder.rglob("*.yml"), *folder.rglob("*.yaml")]):
            shown = Path(project.relative(path))
            for test in _tests_of(path, shown, manifest):
                where = f"{shown}: {test.key}"
                if test.name in names:
                    raise test.error(
                        f"two unit tests are named '{test.name}' (also {names[test.name]}); "
                        "unit test names must be unique",
                        f"{test.key}.name",
                    )
                names[test.name] = where
                found.append(test)
    return found


def _tests_of(path: Path, shown: Path, manifest: Manifest) -> list[UnitTest]:
    try:
        data = load_yaml(read_utf8(path, shown)) or {}
    except yaml.YAMLError as err:
        raise ConfigError(f"invalid YAML: {err}", path=shown) from None
    if not isinstance(data, dict) or data.get("unit_tests") is None:
        return []
    entries = data["unit_tests"]
    if not isinstance(entries, list):
        raise ConfigError(
            "'unit_tests' must be a list of mappings (name, model, given, expect)",
            path=shown,
            key="unit_tests",
        )
    found = []
    for i, raw in enumerate(entries):
        entry = checked(UnitTestEntry, raw, key=f"unit_tests[{i}]", path=shown)
        if entry.config.get("enabled", True) is not False:  # dbt's config: {enabled: false}
            found.append(_unit_test(entry, shown, i, manifest))
    return found


def _unit_test(entry: UnitTestEntry, path: Path, index: int, manifest: Manifest) -> UnitTest:
    key = f"unit_tests[{index}]"
    if entry.model not in manifest.models:
        models = ", ".join(sorted(manifest.models)) or "none"
        raise ConfigError(
            f"unit test '{entry.name}' names no model '{entry.model}'; models: {models}",
            path=path,
            key=f"{key}.model",
        )
    node = manifest.models[entry.model]
    accepted = [f"ref('{r}')" for r in node.refs] + [
        f"source('{s}', '{t}')" for s, t in node.sources
    ]
    if node.config.merge_engine:
        accepted.append(THIS)
    given: list[Input] = []
    for i, raw in enumerate(entry.given):
        where = f"{key}.given[{i}]"
        kind, name = _parse_input(raw.input, path, f"{where}.input")
        allowed = (
            (kind == "ref" and name in node.refs)
            or (kind == "source" and name in node.sources)
            or (kind == THIS and node.config.merge_engine is not None)
        )
        if not allowed:
            raise ConfigError(
                f"input {raw.input!r} is not an input of model {entry.model}; its inputs: "
                f"{', '.join(accepted) or 'none'}"
                + ("" if kind != THIS else " (`this` is for key tables: set merge_engine)"),
                path=path,
                key=f"{where}.input",
            )
        if any(g.kind == kind and g.name == name for g in given):
            raise ConfigError(
                f"input {raw.input!r} is given twice", path=path, key=f"{where}.input"
            )
        rows = rows_of(raw.rows, raw.format, path, f"{where}.rows")
        given.append(Input(kind, name, rows, where, text=raw.format == "csv"))
    expect = rows_of(entry.expect.rows, entry.expect.format, path, f"{key}.expect.rows")
    has_this = any(g.kind == THIS for g in given)
    plan = entry.plan or ("incremental" if has_this else "bootstrap")
    if plan == "incremental" and node.config.merge_engine is None:
        raise ConfigError(
            f"plan 'incremental' is for key tables; model {entry.model} is a "
            f"{node.config.materialized or 'table'} (it is rebuilt every run)",
            path=path,
            key=f"{key}.plan",
        )
    if plan == "bootstrap" and has_this:
        raise ConfigError(
            "plan 'bootstrap' starts from no table, so `this` cannot be given; drop the "
            "`this` input or use plan: incremental",
            path=path,
            key=f"{key}.plan",
        )
    return UnitTest(
        name=entry.name,
        model=entry.model,
        path=path,
        key=key,
        given=given,
        expect=expect,
        plan=plan,
        description=entry.description,
        tags=list(entry.tags),
    )


def _parse_input(text: str, path: Path, key: str) -> tuple[str, Any]:
    text = text.strip()
    if text == THIS:
        return THIS, THIS
    ref = _REF.match(text)
    if ref:
        return "ref", ref.group(2)
    source = _SOURCE.match(text)
    if source:
        return "source", (source.group(2), source.group(4))
    raise ConfigError(
        f"input {text!r} is not ref('model'), source('source', 'table') or this",
        path=path,
        key=key,
    )


def rows_of(value: Any, fmt: str, path: Path, key: str) -> list[dict[str, Any]]:
    """Rows as column -> value mappings; ``csv``: text with a header line (empty cells are
    NULL, values stay text)."""
    if value is None:
        return []
    if fmt == "csv":
        if not isinstance(value, str):
            raise ConfigError(
                "format csv takes the rows as text: a header line, then one line per row "
                "(use `rows: |`)",
                path=path,
                key=key,
            )
        reader = csv.reader(io.StringIO(value.strip("\n")))
        lines = [row for row in reader if row]
        if not lines:
            return []
        header = [h.strip() for h in lines[0]]
        rows = []
        for n, line in enumerate(lines[1:], start=1):
            if len(line) != len(header):
                raise ConfigError(
                    f"csv line {n + 1} has {len(line)} values, the header {len(header)} "
                    f"({', '.join(header)})",
                    path=path,
                    key=key,
                )
            rows.append({h: (v.strip() or None) for h, v in zip(header, line)})
        return rows
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise ConfigError(
            "rows are a list of mappings ({column: value}, one per row); for CSV text set "
            "format: csv",
            path=path,
            key=key,
        )
    for n, row in enumerate(value):
        for column in row:
            if not isinstance(column, str):
                raise ConfigError(
                    f"column name {column!r} is not text", path=path, key=f"{key}[{n}]"
                )
    return [dict(r) for r in value]

"""Model properties declared in ``models/**/*.yml`` (dbt style): the ``models:`` list.

Each entry names a model and gives its description, its columns (name, description, data
tests) and model-level data tests. dbt's older ``tests:`` key is read like ``data_tests:``.
The test entries are kept as written (``TestEntry``); ``lakewide.project.data_tests`` checks their
names and arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lakewide.project.config.specs import Strict, checked
from lakewide.project.text_files import load_yaml, read_utf8
from lakewide.vocabulary.errors import ConfigError


@dataclass(frozen=True)
class TestEntry:
    """One entry of a ``data_tests:`` list as written: ``unique`` or ``{accepted_values: {...}}``.

    ``key`` locates it in its file, e.g. ``models[0].columns[1].data_tests[0]``.
    """

    test: str  # the generic test's name, e.g. ``not_null``
    arguments: dict[str, Any]  # as written (config keys included; split later)
    path: Path
    key: str


@dataclass(frozen=True)
class ColumnProperties:
    """One ``columns:`` entry."""

    name: str
    description: str = ""
    data_type: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    tests: list[TestEntry] = field(default_factory=list)


@dataclass(frozen=True)
class ModelProperties:
    """One ``models:`` entry: what the docs show and the data tests declared."""

    name: str
    path: Path
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, ColumnProperties] = field(default_factory=dict)
    tests: list[TestEntry] = field(default_factory=list)  # model-level


class _Column(Strict):
    name: str
    description: str | None = None
    data_type: str | None = None
    meta: dict[str, Any] = {}
    tags: list[str] = []
    quote: bool | None = None
    data_tests: list[Any] = []
    tests: list[Any] = []  # dbt before 1.8


class _Model(Strict):
    name: str
    description: str | None = None
    meta: dict[str, Any] = {}
    tags: list[str] = []
    docs: dict[str, Any] = {}
    config: dict[str, Any] = {}  # documentation only: config() in the model's file rules
    columns: list[_Column] = []
    data_tests: list[Any] = []
    tests: list[Any] = []  # dbt before 1.8


def _test_entries(raw: list[Any], key: str, path: Path) -> list[TestEntry]:
    """``unique`` or ``{name: {arguments}}`` entries (one key per mapping)."""
    entries: list[TestEntry] = []
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        if isinstance(item, str):
            entries.append(TestEntry(item, {}, path, where))
            continue
        if isinstance(item, dict) and len(item) == 1:
            ((name, arguments),) = item.items()
            if arguments is None:
                arguments = {}
            if isinstance(name, str) and isinstance(arguments, dict):
                entries.append(TestEntry(name, dict(arguments), path, where))
                continue
        raise ConfigError(
            "a data test is a test name (e.g. `- unique`) or a mapping of one test name to "
            "its arguments (e.g. `- accepted_values: {values: [a, b]}`)",
            path=path,
            key=where,
        )
    return entries


def _both(data_tests: list[Any], tests: list[Any], key: str, path: Path) -> list[TestEntry]:
    if data_tests and tests:
        raise ConfigError(
            "give the tests under 'data_tests' or under 'tests' (dbt's older name), not both",
            path=path,
            key=key,
        )
    name = "data_tests" if data_tests else "tests"
    return _test_entries(data_tests or tests, f"{key}.{name}", path)


def _model_entries(data: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    value = data.get("models")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) and "name" in v for v in value):
        raise ConfigError(
            "'models' must be a list of mappings each with a 'name'", path=path, key="models"
        )
    return value


def _refuse_source_tests(data: dict[str, Any], path: Path) -> None:
    """Data tests under ``sources:`` would silently never run: refused, saying what to do."""
    sources = data.get("sources")
    for s_index, source in enumerate(sources if isinstance(sources, list) else []):
        tables = source.get("tables") if isinstance(source, dict) else None
        for t_index, table in enumerate(tables if isinstance(tables, list) else []):
            if not isinstance(table, dict):
                continue
            key = f"sources[{s_index}].tables[{t_index}]"
            places = [(key, table)] + [
                (f"{key}.columns[{c_index}]", column)
                for c_index, column in enumerate(table.get("columns") or [])
                if isinstance(column, dict)
            ]
            for where, entry in places:
                for name in ("data_tests", "tests"):
                    if entry.get(name):
                        raise ConfigError(
                            "lakewide runs data tests on models, not on sources: declare them "
                            "on a model reading the source, or write a singular test "
                            "(data-tests/*.sql) selecting the source's failing rows",
                            path=path,
                            key=f"{where}.{name}",
                        )


def load_model_properties(
    yml_files: list[Path], model_names: set[str], shown: dict[Path, str] | None = None
) -> dict[str, ModelProperties]:
    """Every ``models:`` entry of the given YAML files, by model name.

    A name that is no model file, or a model described twice, is a ConfigError naming the file
    and key. ``shown`` maps a file to the path printed in messages.
    """
    found: dict[str, ModelProperties] = {}
    for path in yml_files:
        where = Path((shown or {}).get(path, str(path)))
        try:
            data = load_yaml(read_utf8(path, where)) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"invalid YAML: {err}", path=where) from None
        if not isinstance(data, dict):
            continue
        _refuse_source_tests(data, where)
        for index, raw in enumerate(_model_entries(data, where)):
            key = f"models[{index}]"
            entry = checked(_Model, raw, key=key, path=where)
            if entry.name not in model_names:
                raise ConfigError(
                    f"'{entry.name}' names no model; models: {', '.join(sorted(model_names))}",
                    path=where,
                    key=f"{key}.name",
                )
            if entry.name in found:
                raise ConfigError(
                    f"model '{entry.name}' is described twice (also in {found[entry.name].path})",
                    path=where,
                    key=f"{key}.name",
                )
            columns: dict[str, ColumnProperties] = {}
            for c_index, column in enumerate(entry.columns):
                c_key = f"{key}.columns[{c_index}]"
                if column.name in columns:
                    raise ConfigError(
                        f"column '{column.name}' is listed twice", path=where, key=f"{c_key}.name"
                    )
                columns[column.name] = ColumnProperties(
                    column.name,
                    column.description or "",
                    column.data_type,
                    dict(column.meta),
                    _both(column.data_tests, column.tests, c_key, where),
                )
            found[entry.name] = ModelProperties(
                entry.name,
                where,
                entry.description or "",
                dict(entry.meta),
                columns,
                _both(entry.data_tests, entry.tests, key, where),
            )
    return found

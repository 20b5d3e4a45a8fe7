"""Data tests (dbt's): generic tests declared in ``models/*.yml``, the key tests implied by
merge-engine models, and singular tests (SQL files in ``test-paths``, default ``data-tests/``).

Every test becomes a ``DataTest``: its name, the models it depends on, its config (severity,
thresholds, ``store_failures``, ``where``) and its failing-rows query as a sqlglot tree
(``lakewide.compiler.queries.data_test_queries``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlglot
from pydantic import Field, field_validator
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.project.config.specs import Strict, checked, unknown_key
from lakewide.project.model_properties import ModelProperties, TestEntry
from lakewide.project.nodes import ModelNode, Relation
from lakewide.project.sources import Source
from lakewide.project.text_files import read_utf8
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError

SINGULAR = "singular"
_THRESHOLD = re.compile(r"^\s*(==|=|!=|<>|>=|<=|>|<)\s*(\d+)\s*$")
_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"]\s*\)\s*$""")
_SOURCE = re.compile(r"""^\s*source\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]\s*\)\s*$""")
MAX_NAME = 63


def threshold_holds(condition: str, failures: int) -> bool:
    """Whether ``failures`` meets a dbt threshold such as ``!= 0`` or ``> 10``."""
    match = _THRESHOLD.match(condition)
    assert match is not None, "checked when the config was read"
    op, limit = match.group(1), int(match.group(2))
    return {
        "==": failures == limit,
        "=": failures == limit,
        "!=": failures != limit,
        "<>": failures != limit,
        ">=": failures >= limit,
        "<=": failures <= limit,
        ">": failures > limit,
        "<": failures < limit,
    }[op]


class TestConfig(Strict):
    """A data test's ``config:`` (dbt's keys)."""

    __test__ = False  # not a pytest class

    severity: str = "error"
    warn_if: str = "!= 0"
    error_if: str = "!= 0"
    store_failures: bool = False
    where: str | None = None
    enabled: bool = True
    schema_: str | None = Field(None, alias="schema")  # audit namespace for store_failures
    tags: list[str] = []
    meta: dict[str, Any] = {}

    @field_validator("severity")
    @classmethod
    def _severity(cls, value: str) -> str:
        if value.lower() not in ("warn", "error"):
            raise ValueError("severity is 'warn' or 'error'")
        return value.lower()

    @field_validator("warn_if", "error_if")
    @classmethod
    def _threshold(cls, value: str) -> str:
        if not _THRESHOLD.match(value):
            raise ValueError("a threshold is a comparison with a number, e.g. '!= 0' or '> 10'")
        return value


CONFIG_KEYS = [f.alias or name for name, f in TestConfig.model_fields.items()]


class _NoArguments(Strict):
    column_name: str | None = None  # model-level: the column (or expression) under test


class _AcceptedValues(_NoArguments):
    values: list[Any]
    quote: bool = True


class _Relationships(_NoArguments):
    to: str
    field: str


class _ExpressionIsTrue(_NoArguments):
    expression: str


ARGUMENTS: dict[str, type[_NoArguments]] = {
    "unique": _NoArguments,
    "not_null": _NoArguments,
    "accepted_values": _AcceptedValues,
    "relationships": _Relationships,
    "expression_is_true": _ExpressionIsTrue,
}
ALIASES = {"dbt_utils.expression_is_true": "expression_is_true"}


@dataclass(frozen=True)
class TestQuery:
    """What a generic test needs to build its query (trees only)."""

    __test__ = False  # not a pytest class

    test: str  # unique | not_null | accepted_values | relationships | expression_is_true
    table: exp.Table  # the model's table
    columns: list[exp.Expr] = field(default_factory=list)  # empty: model-level
    where: exp.Expr | None = None  # ``config: where`` filters the model first
    values: list[exp.Expr] = field(default_factory=list)  # accepted_values
    to: exp.Table | None = None  # relationships: the parent table
    to_field: exp.Expr | None = None  # relationships: the parent's column
    expression: exp.Expr | None = None  # expression_is_true (column already inside)


@dataclass(frozen=True)
class DataTest:
    """One data test, ready to compile and run."""

    name: str
    test: str  # a generic test's name, or ``singular``
    model: str | None  # the model it is declared on (singular: None)
    column: str | None
    config: TestConfig
    depends_on: tuple[str, ...]  # models read, in order of mention
    path: Path  # where it is declared (shown relative to the project)
    key: str | None
    # what it checks: a generic test's parts (the compiler builds its failing-rows query,
    # lakewide.compiler.queries.data_test_queries), or a singular test's own query
    spec: TestQuery | exp.Query
    arguments: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    implied: bool = False  # a merge-engine model's key test

    @property
    def test_type(self) -> str:
        return "data"


@dataclass
class _Context:
    """What reading tests needs from the manifest being loaded."""

    models: dict[str, ModelNode]
    sources: dict[tuple[str, str], Source]
    all_models: set[str]  # enabled or not


def _parse(text: str, what: str, path: Path, key: str) -> exp.Expr:
    try:
        parsed = sqlglot.parse_one(text, read=DIALECT)
    except ParseError as err:
        raise ConfigError(f"{what} does not parse as SQL: {err}", path=path, key=key) from None
    return parsed


def _slug(value: Any) -> str:
    return re.sub(r"[^0-9A-Za-z_]+", "_", str(value)).strip("_")


def default_test_name(test: str, model: str, column: str | None, extra: list[Any]) -> str:
    """dbt's default name: ``<test>_<model>_<column>[__<arguments>]``, shortened with a hash
    when longer than 63 characters (an Iceberg table is named after it)."""
    parts = [test, model, *([_slug(column)] if column else [])]
    name = "_".join(parts) + "".join(f"__{_slug(v)}" for v in extra if _slug(v))
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.md5(name.encode("utf-8")).hexdigest()[:10]
    return f"{name[: MAX_NAME - 11]}_{digest}"


def _split(entry: TestEntry) -> tuple[str, dict[str, Any], dict[str, Any], str | None, str]:
    """(test, arguments, config, name, description) of an entry; config keys given next to
    the arguments (dbt before 1.8) count as config."""
    test = ALIASES.get(entry.test, entry.test)
    if test not in ARGUMENTS:
        raise ConfigError(
            unknown_key(entry.test, [*ARGUMENTS, *ALIASES], what="data test"),
            path=entry.path,
            key=entry.key,
        )
    raw = dict(entry.arguments)
    config = raw.pop("config", None) or {}
    nested = raw.pop("arguments", None) or {}
    name, description = raw.pop("name", None), raw.pop("description", None) or ""
    if not isinstance(config, dict) or not isinstance(nested, dict):
        raise ConfigError(
            "'config' and 'arguments' of a data test are mappings",
            path=entry.path,
            key=f"{entry.key}.{entry.test}",
        )
    arguments = {**nested, **{k: v for k, v in raw.items() if k not in CONFIG_KEYS}}
    config = {**{k: v for k, v in raw.items() if k in CONFIG_KEYS}, **config}
    return test, arguments, config, None if name is None else str(name), str(description)


def _target(to: str, ctx: _Context, entry: TestEntry, key: str) -> tuple[Relation, str | None]:
    """``ref('m')`` or ``source('s', 't')``: the relation and the model it names (if any)."""
    ref, source = _REF.match(to), _SOURCE.match(to)
    if ref:
        name = ref.group(1)
        if name not in ctx.models:
            state = "a disabled model" if name in ctx.all_models else "no model"
            raise ConfigError(
                f"ref('{name}') names {state}; models: {', '.join(sorted(ctx.models))}",
                path=entry.path,
                key=key,
            )
        return ctx.models[name].relation, name
    if source and (source.group(1), source.group(2)) in ctx.sources:
        return ctx.sources[(source.group(1), source.group(2))].relation, None
    declared = ", ".join(f"{s}.{t}" for s, t in sorted(ctx.sources)) or "none declared"
    raise ConfigError(
        f"'to: {to}' must be ref('model') or source('source', 'table') of a declared source "
        f"(declared sources: {declared})",
        path=entry.path,
        key=key,
    )


def generic_test(
    entry: TestEntry, node: ModelNode, column: str | None, ctx: _Context
) -> DataTest | None:
    """The test an entry declares on ``node`` (``column`` for a column's test); None when
    its config disables it."""
    test, raw_arguments, raw_config, name, description = _split(entry)
    key = f"{entry.key}.{entry.test}"
    config = checked(TestConfig, raw_config, key=f"{key}.config", path=entry.path)
    arguments = checked(ARGUMENTS[test], raw_arguments, key=key, path=entry.path)
    if not config.enabled:
        return None
    if column is None and arguments.column_name is None and test != "expression_is_true":
        raise ConfigError(
            f"a model-level '{test}' test needs 'column_name' (or declare it under the column)",
            path=entry.path,
            key=key,
        )
    if column is not None and arguments.column_name is not None:
        raise ConfigError(
            "'column_name' is for model-level tests; this test is declared under a column",
            path=entry.path,
            key=f"{key}.column_name",
        )
    subject = column or arguments.column_name
    target: exp.Expr | None = None
    if column is not None:
        target = exp.column(column)
    elif arguments.column_name is not None:
        target = _parse(arguments.column_name, "column_name", entry.path, f"{key}.column_name")
    query = TestQuery(test, node.relation.table(), columns=[target] if target else [])
    extra: list[Any] = []
    depends = [node.name]
    if config.where:
        query = _with(query, where=_parse(config.where, "where", entry.path, f"{key}.config.where"))
    if isinstance(arguments, _AcceptedValues):
        values = [
            exp.Literal.string(str(v))
            if arguments.quote
            else _parse(str(v), "value", entry.path, f"{key}.values")
            for v in arguments.values
        ]
        if not values:
            raise ConfigError("'values' lists no value", path=entry.path, key=f"{key}.values")
        query, extra = _with(query, values=values), list(arguments.values)
    elif isinstance(arguments, _Relationships):
        relation, model = _target(arguments.to, ctx, entry, f"{key}.to")
        to_field = _parse(arguments.field, "field", entry.path, f"{key}.field")
        query = _with(query, to=relation.table(), to_field=to_field)
        extra = [arguments.field, arguments.to]
        depends += [model] if model and model != node.name else []
    elif isinstance(arguments, _ExpressionIsTrue):
        # dbt_utils: a column-level expression continues the column ("price >= 0")
        placeholder = "__lw_column__"
        text = f"{placeholder} {arguments.expression}" if target else arguments.expression
        expression = _parse(text, "expression", entry.path, f"{key}.expression")
        if target is not None:
            expression = expression.transform(
                lambda n: (
                    target.copy() if isinstance(n, exp.Column) and n.name == placeholder else n
                )
            )
        query, extra = _with(query, expression=expression), [arguments.expression]
    return DataTest(
        name=name or default_test_name(test, node.name, subject, extra),
        test=test,
        model=node.name,
        column=subject,
        config=config,
        depends_on=tuple(depends),
        path=entry.path,
        key=entry.key,
        spec=query,
        arguments=arguments.model_dump(exclude_defaults=True),
        description=description,
    )


def _with(query: TestQuery, **changes: Any) -> TestQuery:
    return replace(query, **changes)


def implied_key_tests(node: ModelNode, shown: Path) -> list[DataTest]:
    """A merge-engine model's primary key is unique and never NULL: both tests, as declared
    tests would be (a declared test of the same name replaces its implied one)."""
    keys = list(node.config.primary_key)
    if not node.config.kind.is_key_table or not keys:
        return []
    columns: list[exp.Expr] = [exp.column(k) for k in keys]
    subject = "__".join(keys)
    tests = []
    for test in ("unique", "not_null"):
        query = TestQuery(test, node.relation.table(), columns=columns)
        tests.append(
            DataTest(
                name=default_test_name(test, node.name, subject, []),
                test=test,
                model=node.name,
                column=", ".join(keys),
                config=TestConfig.model_validate({}),
                depends_on=(node.name,),
                path=shown,
                key="primary_key",
                spec=query,
                description=f"implied by primary_key={keys} ({node.config.merge_engine})",
                implied=True,
            )
        )
    return tests


def singular_test(
    name: str, sql: str, config: dict[str, Any], refs: list[str], shown: Path
) -> DataTest | None:
    """A SQL file returning failing rows (rendered already); None when its config disables it."""
    checked_config = checked(TestConfig, config, key="config", path=shown)
    if not checked_config.enabled:
        return None
    query = _parse(sql.strip().rstrip(";"), "the test", shown, "")
    if not isinstance(query, exp.Query):
        raise ConfigError(
            "a singular test is one query (SELECT ...) returning the failing rows", path=shown
        )
    return DataTest(
        name=name,
        test=SINGULAR,
        model=None,
        column=None,
        config=checked_config,
        depends_on=tuple(dict.fromkeys(refs)),
        path=shown,
        key=None,
        spec=query,
    )


def collect_generic_tests(
    properties: dict[str, ModelProperties],
    models: dict[str, ModelNode],
    sources: dict[tuple[str, str], Source],
    all_models: set[str],
    shown: Callable[[Path], Path],
) -> list[DataTest]:
    """The tests of every enabled model: declared ones, then implied key tests not declared."""
    ctx = _Context(models, sources, all_models)
    found: list[DataTest] = []
    for name, node in models.items():
        props = properties.get(name)
        declared: list[DataTest | None] = []
        if props is not None:
            declared += [generic_test(e, node, None, ctx) for e in props.tests]
            for column in props.columns.values():
                declared += [generic_test(e, node, column.name, ctx) for e in column.tests]
        mine = [t for t in declared if t is not None]
        names = {t.name for t in mine}
        found += mine + [
            t for t in implied_key_tests(node, shown(node.path)) if t.name not in names
        ]
    return found


def by_name(tests: list[DataTest]) -> dict[str, DataTest]:
    """Tests by name; two tests of one name are a ConfigError naming both places."""
    named: dict[str, DataTest] = {}
    for test in tests:
        if test.name in named:
            other = named[test.name]
            raise ConfigError(
                f"two data tests are named '{test.name}' (the other: {other.path}"
                f"{f' [{other.key}]' if other.key else ''}); give one a 'name:'",
                path=test.path,
                key=test.key,
            )
        named[test.name] = test
    return named


def load_singular_tests(
    folders: list[Path],
    render: Callable[[Path, str], tuple[str, dict[str, Any], list[str]]],
    shown: Callable[[Path], Path],
) -> list[DataTest]:
    """``<folder>/**/*.sql``: each file one test named after it. ``render`` gives a file's
    SQL, its config() and the models it ref()s."""
    tests: list[DataTest] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.sql")):
            sql, config, refs = render(path, read_utf8(path, shown(path)))
            test = singular_test(path.stem, sql, config, refs, shown(path))
            if test is not None:
                tests.append(test)
    return tests

"""A unit test's inputs as tables: columns declared, given or read by the model, each typed
(declared, else inferred from the given values, else STRING), the given rows converted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.run.testing.unit_tests.inputs import Declared, read_columns
from lakewide.run.testing.unit_tests.spec import THIS, Input, UnitTest
from lakewide.run.testing.unit_tests.values import (
    ValueMismatch,
    convert,
    data_type,
    infer_type,
    rows_query,
)
from lakewide.vocabulary.dialect import DIALECT

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@dataclass
class InputTable:
    """An input of the model as a table (or session view) of the scratch catalog."""

    relation: Relation
    columns: dict[str, exp.DataType]
    rows: list[list[Any]]  # converted values, in column order

    def create(self, adapter: SparkAdapter, *, with_rows: bool) -> None:
        if not self.relation.catalog:  # a view model upstream: a session view of the rows
            adapter.sql(_as_view(self.relation, rows_query(self.columns, [])))
            if with_rows:
                self.append(adapter)
            return
        adapter.ensure_namespace(self.relation)
        schema = exp.Schema(
            this=self.relation.table(),
            expressions=[
                exp.ColumnDef(this=exp.to_identifier(name), kind=dtype.copy())
                for name, dtype in self.columns.items()
            ],
        )
        adapter.sql(
            exp.Create(
                this=schema,
                kind="TABLE",
                properties=exp.Properties(
                    expressions=[exp.FileFormatProperty(this=exp.var("iceberg"))]
                ),
            )
        )
        if with_rows:
            self.append(adapter)

    def append(self, adapter: SparkAdapter) -> None:
        """One commit holding the rows, in the order given (one data file: arrival order);
        a session view is replaced by one over the rows."""
        if not self.relation.catalog:
            adapter.sql(_as_view(self.relation, rows_query(self.columns, self.rows)))
        elif self.rows:
            adapter.sql(exp.insert(rows_query(self.columns, self.rows), self.relation.table()))


def _as_view(relation: Relation, query: exp.Select) -> exp.Create:
    return exp.Create(
        this=relation.table(),
        kind="VIEW",
        replace=True,
        expression=query,
        properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
    )


def input_tables(
    manifest: Manifest, node: ModelNode, test: UnitTest, declared: Declared
) -> list[InputTable]:
    """Every input of the model as a table: given rows, or none (an empty table)."""
    given = {i.label: i for i in test.given if i.kind != THIS}
    wanted: list[tuple[str, Relation]] = [
        (f"source('{s}', '{t}')", manifest.sources[(s, t)].relation) for s, t in node.sources
    ] + [(f"ref('{r}')", manifest.models[r].relation) for r in node.refs]
    tables = []
    for label, relation in wanted:
        if relation.catalog and relation.catalog != manifest.output.catalog:
            raise test.error(
                f"{label} lives in catalog '{relation.catalog}', not the profile's: unit tests "
                "run in a throwaway copy of the profile's catalog only",
                f"{test.key}.model",
            )
        tables.append(_input_table(label, relation, given.get(label), node, test, declared))
    return tables


def _input_table(
    label: str,
    relation: Relation,
    given: Input | None,
    node: ModelNode,
    test: UnitTest,
    declared: Declared,
) -> InputTable:
    rows = given.rows if given else []
    types = dict(declared.get(label, {}))
    names = list(types)
    for row in rows:
        names += [c for c in row if c not in names]
    names += [c for c in read_columns(node.sql, relation) if c not in names]
    columns: dict[str, exp.DataType] = {}
    for name in names:
        text = types.get(name)
        if text is None:
            try:
                text = infer_type([r.get(name) for r in rows], bool(given and given.text))
            except ValueMismatch as kinds:
                assert given is not None
                raise test.error(
                    f"column '{name}' of {label} has values of different types ({kinds}); give "
                    f"every value of a column the same type, or declare its data_type in the "
                    "columns of the source or model",
                    f"{given.key}.rows",
                ) from None
        try:
            columns[name] = data_type(text or "string")
        except Exception:  # noqa: BLE001 - sqlglot raises several kinds
            raise test.error(
                f"data_type {text!r} of column '{name}' of {label} is not a type"
            ) from None
    converted = [
        [_converted(row.get(c), dt, c, n, given, test) for c, dt in columns.items()]
        for n, row in enumerate(rows)
    ]
    return InputTable(relation, columns, converted)


def _converted(
    value: Any, dtype: exp.DataType, column: str, n: int, given: Input | None, test: UnitTest
) -> Any:
    try:
        return convert(value, dtype)
    except ValueMismatch:
        key = f"{given.key}.rows[{n}].{column}" if given else test.key
        raise test.error(
            f"value {value!r} is not a valid {dtype.sql(DIALECT).lower()} "
            f"(the type of column '{column}')",
            key,
        ) from None

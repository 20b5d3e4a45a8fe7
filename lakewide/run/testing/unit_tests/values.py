"""Values of unit-test rows: typed (declared or inferred), written as SQL literals, compared.

No Spark here: a value given in YAML or CSV is converted to the Python value Spark returns for
its column type, so that given rows become typed literals and expected rows compare with the
rows Spark collects.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from lakewide.project.text_types import infer_text_type
from lakewide.vocabulary.dialect import DIALECT

T = exp.DataType.Type
INTEGERS = {T.TINYINT: 8, T.SMALLINT: 16, T.INT: 32, T.BIGINT: 64}
FLOATS = (T.FLOAT, T.DOUBLE)
TIMESTAMPS = (T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMPNTZ, T.TIMESTAMPLTZ)
TEXTS = (T.TEXT, T.VARCHAR, T.CHAR)
_INT_TEXT = re.compile(r"^[+-]?\d+$")
_DATE_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TS_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$")


class ValueMismatch(ValueError):
    """A value that does not fit its column's type."""


def data_type(text: str) -> exp.DataType:
    """A Spark type name (``bigint``, ``decimal(10,2)``, ``array<int>``) as a sqlglot type."""
    return exp.DataType.build(text, dialect=DIALECT)


def convert(value: Any, dtype: exp.DataType) -> Any:
    """``value`` as the Python value Spark gives a ``dtype`` column (None stays None);
    ValueMismatch when it does not fit."""
    if value is None:
        return None
    kind = dtype.this
    if hasattr(value, "asDict"):  # a collected Spark struct
        value = value.asDict(recursive=False)
    if kind in INTEGERS:
        return _integer(value, INTEGERS[kind])
    if kind in FLOATS:
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
            raise ValueMismatch
        try:
            return float(value)
        except ValueError:
            raise ValueMismatch from None
    if kind == T.DECIMAL:
        if isinstance(value, (bool, dt.date)):
            raise ValueMismatch
        try:
            found = Decimal(str(value))
        except InvalidOperation:
            raise ValueMismatch from None
        if not found.is_finite():
            raise ValueMismatch
        return found
    if kind == T.BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ValueMismatch
    if kind in TEXTS:
        if isinstance(value, (list, dict)):
            raise ValueMismatch
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dt.datetime):
            return value.isoformat(sep=" ")
        return str(value)
    if kind == T.DATE:
        if isinstance(value, dt.datetime):
            if value.time() != dt.time():
                raise ValueMismatch
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str) and _DATE_TEXT.match(value.strip()):
            return _parsed(dt.date.fromisoformat, value.strip())
        raise ValueMismatch
    if kind in TIMESTAMPS:
        if isinstance(value, dt.datetime):
            return value.replace(tzinfo=None)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day)
        if isinstance(value, str) and (
            _TS_TEXT.match(value.strip()) or _DATE_TEXT.match(value.strip())
        ):
            return _parsed(dt.datetime.fromisoformat, value.strip())
        raise ValueMismatch
    if kind == T.ARRAY:
        if not isinstance(value, (list, tuple)):
            raise ValueMismatch
        return [convert(v, dtype.expressions[0]) for v in value]
    if kind == T.MAP:
        if not isinstance(value, dict):
            raise ValueMismatch
        key, val = dtype.expressions
        return {convert(k, key): convert(v, val) for k, v in value.items()}
    if kind == T.STRUCT:
        if not isinstance(value, dict):
            raise ValueMismatch
        fields = _fields(dtype)
        unknown = set(value) - set(fields)
        if unknown:
            raise ValueMismatch
        return {name: convert(value.get(name), t) for name, t in fields.items()}
    return value  # other types (binary, intervals): as given, Spark casts


def _integer(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        raise ValueMismatch
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    elif isinstance(value, str) and _INT_TEXT.match(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueMismatch
    return value


def _parsed(parse: Any, text: str) -> Any:
    try:
        return parse(text)
    except ValueError:
        raise ValueMismatch from None


def _fields(dtype: exp.DataType) -> dict[str, exp.DataType]:
    return {f.name: f.args["kind"] for f in dtype.expressions}


def literal(value: Any, dtype: exp.DataType) -> exp.Expr:
    """A converted value as a SQL expression of type ``dtype``."""
    if value is None:
        return exp.cast(exp.null(), dtype.copy())
    kind = dtype.this
    if kind == T.ARRAY:
        return exp.Array(expressions=[literal(v, dtype.expressions[0]) for v in value])
    if kind == T.MAP:
        key, val = dtype.expressions
        parts: list[exp.Expr] = []
        for k, v in value.items():
            parts += [literal(k, key), literal(v, val)]
        return exp.cast(exp.Anonymous(this="MAP", expressions=parts), dtype.copy())
    if kind == T.STRUCT:
        fields = _fields(dtype)
        return exp.Struct(
            expressions=[exp.alias_(literal(value[n], t), n) for n, t in fields.items()]
        )
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        text = repr(value) if isinstance(value, float) else str(value)
        if isinstance(value, float) and not math.isfinite(value):
            text = str(value)
            return exp.cast(exp.Literal.string(text), dtype.copy())
        return exp.cast(exp.Literal.number(text), dtype.copy())
    if isinstance(value, dt.datetime):
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), dtype.copy())
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), dtype.copy())
    return exp.cast(exp.Literal.string(str(value)), dtype.copy())


def rows_query(columns: dict[str, exp.DataType], rows: list[list[Any]]) -> exp.Select:
    """``SELECT /*+ COALESCE(1) */ cols FROM VALUES (...) AS __lw_rows(cols)`` with typed
    literals (no rows: ``WHERE FALSE`` over one row of NULLs)."""
    names = list(columns)
    types = list(columns.values())
    tuples = [
        exp.Tuple(expressions=[literal(v, t) for v, t in zip(row, types)])
        for row in (rows or [[None] * len(names)])
    ]
    values = exp.Values(
        expressions=tuples,
        alias=exp.TableAlias(
            this=exp.to_identifier("__lw_given"), columns=[exp.to_identifier(n) for n in names]
        ),
    )
    select = exp.select(*(exp.column(n) for n in names)).from_(values)
    select.set(
        "hint",
        exp.Hint(expressions=[exp.Anonymous(this="COALESCE", expressions=[exp.Literal.number(1)])]),
    )
    return select if rows else select.where(exp.false())


# ---------------------------------------------------------------- types of untyped inputs
def infer_type(values: list[Any], text: bool) -> str | None:
    """The Spark type of a column from its given values (None when every value is NULL).

    YAML values: bool -> boolean, int -> int (bigint when one does not fit 32 bits), float ->
    double, date -> date, datetime -> timestamp, str -> string. CSV text (``text``): the
    inference seeds use (lakewide.project.text_types: a type only when every value is in its
    canonical form, else string). A YAML column mixing kinds (a number and a string): ValueMismatch.
    """
    if text:
        return infer_text_type(None if v is None else str(v) for v in values)
    found = [v for v in values if v is not None]
    if not found:
        return None
    kinds = {_kind(v) for v in found}
    if kinds <= {"int", "bigint"}:
        return "bigint" if "bigint" in kinds else "int"
    if kinds <= {"int", "bigint", "double"}:
        return "double"
    if kinds <= {"date", "timestamp"}:
        return "timestamp" if "timestamp" in kinds else "date"
    if len(kinds) == 1:
        return kinds.pop()
    raise ValueMismatch(", ".join(sorted(kinds)))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int" if -(2**31) <= value < 2**31 else "bigint"
    if isinstance(value, float):
        return "double"
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, str):
        return "string"
    raise ValueMismatch(type(value).__name__)


# ---------------------------------------------------------------- comparing rows
def comparable(value: Any) -> Any:
    """A converted value in a hashable form that compares as Spark's values mean it
    (floats to 12 significant digits)."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, Decimal):
        return value.normalize()
    if isinstance(value, list):
        return tuple(comparable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), comparable(v)) for k, v in value.items()))
    return value


def shown(value: Any) -> str:
    """A value as the failure message prints it."""
    if value is None:
        return "NULL"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value.normalize()) if value == value.to_integral_value() else str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

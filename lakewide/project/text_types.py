"""The one type inference of CSV text: seeds (``lakewide seed``) and unit-test rows given as
CSV (``format: csv``) both type their columns here, so the two never disagree.

Conservative, as dbt keeps text it cannot read for sure: a column gets a type only when every
non-empty value is written in that type's canonical form, else it stays ``string``:

* ``int`` / ``bigint``: an optional ``-`` and digits without a leading zero (``00123`` is a zip
  code, kept as text) that fit 64 bits;
* ``double``: such an integer part, a ``.`` and digits (``2.5``, ``-0.75``); no exponent form,
  so ids like ``1e5`` stay text (declare ``double`` in ``column_types`` to read ``1e5``);
* ``boolean``: ``true`` or ``false`` in any case (``yes``, ``1`` and ``t`` stay text);
* ``date``: ISO ``YYYY-MM-DD`` that is a real day (``2024-02-30`` and ``05/01/2024`` stay text);
* ``timestamp``: ISO ``YYYY-MM-DD HH:MM[:SS[.ffffff]]`` (or ``T`` for the space), no zone
  (a zone would be converted to the session's: declare ``timestamp`` for that), no ``T1``.

Integers mixed with doubles are ``double``; dates mixed with timestamps are ``timestamp``; any
other mix is ``string``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_DOUBLE = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[ T](?P<h>[0-9]{2}):(?P<m>[0-9]{2})"
    r"(:(?P<s>[0-9]{2})(\.[0-9]{1,6})?)?"
)
INFERRED = ("int", "bigint", "double", "boolean", "date", "timestamp", "string")


def text_kind(value: str) -> str:
    """The narrowest type whose canonical form ``value`` is written in (else ``string``)."""
    if _INT.fullmatch(value):
        number = int(value)
        if -(2**31) <= number < 2**31:
            return "int"
        return "bigint" if -(2**63) <= number < 2**63 else "string"
    if _DOUBLE.fullmatch(value):
        return "double"
    if value.lower() in ("true", "false"):
        return "boolean"
    if _DATE.fullmatch(value):
        return "date" if _real_day(value) else "string"
    found = _TIMESTAMP.fullmatch(value)
    if found and _real_day(found["date"]) and _real_time(found["h"], found["m"], found["s"]):
        return "timestamp"
    return "string"


def infer_text_type(values: Iterable[str | None]) -> str | None:
    """The type of a column of CSV text (None and empty values are NULL and say nothing);
    None when no value says anything."""
    kinds = {text_kind(v) for v in values if v}
    if not kinds:
        return None
    if len(kinds) == 1:
        return kinds.pop()
    if kinds <= {"int", "bigint"}:
        return "bigint"
    if kinds <= {"int", "bigint", "double"}:
        return "double"
    if kinds <= {"date", "timestamp"}:
        return "timestamp"
    return "string"


def _real_day(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _real_time(hour: str, minute: str, second: str | None) -> bool:
    return int(hour) < 24 and int(minute) < 60 and int(second or 0) < 60

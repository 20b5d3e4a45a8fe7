"""A ``partition_by`` entry read as Iceberg's Spark DDL writes it: ``col``, ``days(ts)``,
``bucket(16, id)``. The compiler builds the table's partition spec from it
(``compiler/model/layout.py``); ``retention`` finds its column's time transform with it."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Iceberg's partition transforms as Spark DDL names them (``Spark3Util.toPartitionSpec``):
#: name -> whether it takes a width first (``bucket(16, id)``, ``truncate(4, name)``)
PARTITION_TRANSFORMS = {
    "identity": False,
    "bucket": True,
    "truncate": True,
    **dict.fromkeys(("years", "year", "months", "month", "days", "day", "date"), False),
    **dict.fromkeys(("hours", "hour", "date_hour"), False),
}
_FIELD = re.compile(
    r"^\s*(?:(?P<transform>\w+)\s*\(\s*(?:(?P<width>[^,()]*?)\s*,\s*)?(?P<arg>[^,()]*?)\s*\)"
    r"|(?P<column>[^,()]+?))\s*$"
)


@dataclass(frozen=True)
class PartitionField:
    """One entry split up, not yet checked: ``transform`` lower case ('' for a bare
    column), ``width`` as written (None when not given), ``column`` as written."""

    transform: str
    width: str | None
    column: str

    @property
    def column_name(self) -> str:
        """The column without backquotes."""
        return self.column.strip("`")


def split_field(text: str) -> PartitionField | None:
    """The entry's parts; None when it is neither ``col`` nor ``name([width, ]col)``."""
    found = _FIELD.match(text)
    if found is None:
        return None
    return PartitionField(
        (found["transform"] or "").lower(), found["width"], found["arg"] or found["column"] or ""
    )

"""Whether a read's column holds a NULL, answered from its data files' statistics.

Iceberg keeps a NULL count per column for each data file it writes (``null_value_counts``, for
the first 100 columns under the default metrics settings). A read planned in commit order
(lakewide.spark.ordered_read) has its files at hand, so the run's NULL-key count of a
branch whose key is a column of that read needs no Spark job when every file counts no NULL
there. A file without the count (metrics off for the column, an older writer) answers
nothing, and the count is then run as a query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: more files than this are not asked one by one (a query counts faster than the round trips)
MOST_FILES = 1000


@dataclass(frozen=True)
class FileNulls:
    """The data files of one read of an Iceberg table (Java objects of its scan's tasks) and
    the field ids of the columns whose statistics they keep, by lower-case name."""

    fields: dict[str, int]
    files: tuple[Any, ...]

    def none_null(self, column: str) -> bool:
        """True when every file's statistics count no NULL in ``column`` (found as Spark
        finds it, case-insensitively); False when a file has one, or does not say."""
        field_id = self.fields.get(column.lower())
        if field_id is None or len(self.files) > MOST_FILES:
            return False
        for file in self.files:
            counts = file.nullValueCounts()
            found = None if counts is None else counts.get(field_id)
            if found is None or int(found) != 0:
                return False
        return True

"""A CSV, Parquet or JSON file appended to a table as one commit (``lakewide load``): its
columns matched to the table's by name, each value cast to the table's type and checked
before anything is written."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from lakewide.project.nodes import Relation
from lakewide.spark.errors import short
from lakewide.spark.seed_csv import (
    SeedLoading,
    backquoted,
    csv_lines,
    find_misfits,
    misfit_error,
)
from lakewide.vocabulary.errors import ConfigError, ModelRunError

LOADED_FILE = "lakewide.loaded-file"  # snapshot summary: the file an append came from
NUMBERS = ("tinyint", "smallint", "int", "bigint", "float", "double")
LOAD_FIX = "fix the value in the file (nothing was written)"


class FileLoading(SeedLoading):
    """Appends files to existing tables."""

    def append_file(self, path: Path, relation: Relation, file_format: str) -> int:
        """Append the rows of ``path`` (``csv``, ``parquet`` or ``json``) to ``relation`` as
        one commit; returns the rows appended.

        The file's columns must be the table's (any order, names compared without case); a
        value whose cast to its column's type fails is a ConfigError. Nothing is written then.
        """
        from pyspark.sql import functions as F

        from lakewide.spark.commit import commit_with_properties

        table = dict(self.spark.table(str(relation)).dtypes)
        try:
            frame = self._file_frame(path, file_format)
        except Exception as err:  # noqa: BLE001
            raise ConfigError(f"cannot read {path} as {file_format}: {short(err)}") from err
        by_lower = {c.lower(): c for c in frame.columns}
        wanted = {c.lower(): c for c in table}
        missing = [wanted[c] for c in wanted if c not in by_lower]
        extra = [by_lower[c] for c in by_lower if c not in wanted]
        if missing or extra:
            raise ConfigError(
                f"the columns of {path.name} do not match {relation}: "
                + "; ".join(
                    [
                        *([f"missing {', '.join(missing)}"] if missing else []),
                        *([f"not in the table: {', '.join(extra)}"] if extra else []),
                    ]
                )
                + f". Accepted: exactly the table's columns ({', '.join(table)}), in any order"
            )
        frame = frame.select(*(F.col(backquoted(by_lower[c.lower()])).alias(c) for c in table))
        source = dict(frame.dtypes)
        changed = {c: t for c, t in table.items() if source[c] != t}
        exact = tuple(c for c in changed if source[c] in NUMBERS or source[c].startswith("dec"))
        misfits = find_misfits(frame, changed, exact) if changed else {}
        if misfits:
            raise misfit_error(path, changed, misfits, LOAD_FIX, text=file_format == "csv")
        typed = frame.select(
            *[
                F.col(backquoted(c)).cast(t).alias(c) if c in changed else F.col(backquoted(c))
                for c, t in table.items()
            ]
        )
        rows = int(typed.count())
        try:
            commit_with_properties(
                self.spark,
                {LOADED_FILE: path.name},
                lambda: typed.coalesce(1).writeTo(str(relation)).append(),
            )
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(short(err), path=path) from err
        return rows

    def _file_frame(self, path: Path, file_format: str) -> Any:
        """The file as a DataFrame: CSV as text (read on the driver, as seeds are), Parquet
        and JSON with their own types."""
        from pyspark.sql.types import StringType, StructField, StructType

        if file_format == "csv":
            lines = csv_lines(path)
            header = next(csv.reader(lines[:1]), [])
            schema = StructType([StructField(name, StringType()) for name in header])
            return self._read_csv(lines, schema)
        reader = self.spark.read
        return reader.parquet(str(path)) if file_format == "parquet" else reader.json(str(path))

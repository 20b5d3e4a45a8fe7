"""CSV seeds into Iceberg tables: values checked against their types, then commits in the
table's own history (an append when the file only grew, else an overwrite; none when the table
already holds the file), so downstream incremental models stay incremental."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from lakewide.project.nodes import Relation
from lakewide.project.seed_schema import evolution
from lakewide.project.seeds import line_of_value
from lakewide.spark.errors import short
from lakewide.spark.table_metadata import MetadataReads
from lakewide.vocabulary.errors import ConfigError, ModelRunError

SEED_DIGEST = "lakewide.seed-sha256"
SEED_LINES = "lakewide.seed-lines"  # how many lines of the CSV the table holds
SEED_LINES_DIGEST = "lakewide.seed-lines-sha256"  # of those lines and the column types


class SeedLoading(MetadataReads):
    """Loads CSV seeds; a checked seed's DataFrame is kept for its load."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seed_frames: dict[str, Any] = {}  # checked seed frames by digest

    def load_csv(
        self, path: Path, relation: Relation, types: dict[str, str]
    ) -> tuple[str, int | None]:
        """Write the CSV's rows (every column typed by ``types``, header order) into
        ``relation`` as commits of its history: (what was done, rows written).

        * ``unchanged``: the table already holds this exact file: no commit, so downstream
          incremental models see no new snapshot;
        * ``appended``: the file only grew (the lines the table holds are the first lines of
          the file, same types): the new lines are one append (incremental reads follow it);
        * ``overwritten``: other changes: one overwrite of all rows (no delete files:
          Iceberg's changelog reads follow it), after adding new columns and widening types
          (int to bigint, ...) as Iceberg allows (lakewide.project.seed_schema);
        * ``created`` / ``replaced``: a new table, or a column dropped or a type changed
          otherwise (int to string): the table is created (again), which cuts its history.

        A value that does not fit its type is a ConfigError raised before the table is
        touched.
        """
        from pyspark.sql import functions as F

        from lakewide.spark.commit import commit_with_properties

        digest = _seed_digest(path, types)
        lines = csv_lines(path)
        marker = {
            SEED_DIGEST: digest,
            SEED_LINES: str(len(lines)),
            SEED_LINES_DIGEST: _lines_digest(lines, types),
        }
        exists = self.table_exists(relation)
        summary = self.snapshot_summary(relation) if exists else {}
        if summary.get(SEED_DIGEST) == digest:
            return "unchanged", None
        frame = self._seed_frame(path, types)
        old = dict(self.spark.table(str(relation)).dtypes) if exists else {}
        alters = evolution(relation, old, dict(frame.dtypes)) if exists else None
        held = int(summary.get(SEED_LINES) or 0)
        if (
            alters == []
            and 0 < held <= len(lines)
            and summary.get(SEED_LINES_DIGEST) == (_lines_digest(lines[:held], types))
        ):
            action, frame = "appended", self._typed(lines[:1] + lines[held:], types)
        elif alters is not None:
            action = "overwritten"
            for statement in alters:  # columns added, types widened: the history is kept
                self.sql(statement)
        else:
            action = "replaced" if exists else "created"
            self.ensure_namespace(relation)

        def write() -> None:
            writer = frame.writeTo(str(relation))
            if action == "appended":
                writer.append()
            elif action == "overwritten":
                writer.overwrite(F.lit(True))
            elif action == "created":  # the history starts with an append of the rows
                writer.using("iceberg").create()
            else:
                writer.using("iceberg").createOrReplace()

        try:
            commit_with_properties(self.spark, marker, write)
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(short(err), path=path) from err
        return action, int(frame.count())

    def check_seed(self, path: Path, relation: Relation, types: dict[str, str]) -> None:
        """Raise ConfigError when a value of a changed seed does not fit its type (one Spark
        query; ``load_csv`` then reuses the checked frame)."""
        if not self._seed_unchanged(relation, _seed_digest(path, types)):
            self._seed_frame(path, types)

    def _seed_unchanged(self, relation: Relation, digest: str) -> bool:
        return (
            self.table_exists(relation)
            and self.snapshot_summary(relation).get(SEED_DIGEST) == digest
        )

    def _seed_frame(self, path: Path, types: dict[str, str]) -> Any:
        """The CSV as a DataFrame: every column read as text, then cast to its type.

        Every typed column is checked in one query: a non-empty value whose cast is NULL
        does not fit (a ConfigError naming file, line, column, value and type).
        """
        key = _seed_digest(path, types)
        if key in self._seed_frames:
            return self._seed_frames[key]
        cast = {c: t for c, t in types.items() if t.lower() != "string"}
        try:
            text = self._text_frame(csv_lines(path), types)
            misfits = find_misfits(text, cast) if cast else {}
            frame = _cast(text, types)
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(short(err), path=path) from err
        if misfits:
            raise misfit_error(path, cast, misfits)
        self._seed_frames[key] = frame
        return frame

    def _typed(self, lines: list[str], types: dict[str, str]) -> Any:
        """``lines`` (the header first) as a DataFrame of ``types``."""
        return _cast(self._text_frame(lines, types), types)

    def _text_frame(self, lines: list[str], types: dict[str, str]) -> Any:
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([StructField(name, StringType()) for name in types])
        return self._read_csv(lines, schema)

    def _read_csv(self, lines: list[str], schema: Any) -> Any:
        """The CSV's ``lines`` (header first) parsed by Spark's CSV reader with ``schema``:
        lines read here, on the driver: the executors never open the project's files, which
        the workers of a cluster do not see. The lines become a local relation in the plan
        (no Python on the executors) split as Spark's file reader splits them."""
        from pyspark.sql import DataFrame

        if self.remote:
            return self._read_csv_remote(lines, schema)
        encoders = self.spark.sparkContext._jvm.org.apache.spark.sql.Encoders
        dataset = self.spark._jsparkSession.createDataset(lines, encoders.STRING())
        reader = self.spark.read.option("header", True).schema(schema)
        return DataFrame(reader._jreader.csv(dataset), self.spark)

    def _read_csv_remote(self, lines: list[str], schema: Any) -> Any:
        """``_read_csv`` over Spark Connect (no JVM here to build a Dataset of lines): the lines
        as a local relation, each parsed by Spark's CSV parser (``from_csv``), header dropped
        and blank lines skipped as the CSV reader skips them."""
        from pyspark.sql import functions as F

        rows = [(line,) for line in lines[1:] if line]
        ddl = ", ".join(f"{backquoted(field.name)} STRING" for field in schema.fields)
        frame = self.spark.createDataFrame(rows, "value string")
        parsed = frame.select(F.from_csv(F.col("value"), ddl).alias("row"))
        return parsed.select("row.*")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def csv_lines(path: Path) -> list[str]:
    """The CSV's lines, split as Spark's file reader splits them."""
    text = path.read_text(encoding="utf-8-sig")
    return _LINE_BREAK.split(text.removesuffix("\n").removesuffix("\r"))


def _lines_digest(lines: list[str], types: dict[str, str]) -> str:
    data = "\n".join(lines) + "\n" + repr(list(types.items()))
    return hashlib.sha256(data.encode()).hexdigest()


def _cast(frame: Any, types: dict[str, str]) -> Any:
    from pyspark.sql import functions as F

    return frame.select(
        *(
            F.col(backquoted(c)) if t.lower() == "string" else F.col(backquoted(c)).cast(t).alias(c)
            for c, t in types.items()
        )
    )


def _seed_digest(path: Path, types: dict[str, str]) -> str:
    data = path.read_bytes() + repr(list(types.items())).encode()
    return hashlib.sha256(data).hexdigest()


def backquoted(name: str) -> str:
    """A column name quoted for Spark SQL (backquotes doubled)."""
    return "`" + name.replace("`", "``") + "`"


def find_misfits(
    frame: Any, column_types: dict[str, str], exact: tuple[str, ...] = ()
) -> dict[str, tuple[int, str]]:
    """Per typed column: (rows that do not fit, the first such value in file order). A value
    does not fit when its cast is NULL; for the ``exact`` columns (numbers cast to another
    number type) also when casting back does not give the value (a fraction, an overflow)."""
    from pyspark.sql import functions as F

    row = "__lakewide_row"
    framed = frame.withColumn(row, F.monotonically_increasing_id())
    source = dict(frame.dtypes)
    aggregates = []
    for column, type_name in column_types.items():
        value = F.col(backquoted(column))
        cast = value.cast(type_name)
        bad = value.isNotNull() & cast.isNull()
        if column in exact:
            bad = bad | (value.isNotNull() & (cast.cast(source[column]) != value))
        first = F.min_by(value.cast("string"), F.when(bad, F.col(row)))
        aggregates += [F.count(F.when(bad, 1)), first]
    found = framed.agg(*aggregates).collect()[0]
    return {
        column: (found[2 * i], found[2 * i + 1])
        for i, column in enumerate(column_types)
        if found[2 * i]
    }


SEED_FIX = "fix the value, or declare the column's type in the seed's column_types (seeds/*.yml)"


def misfit_error(
    path: Path,
    column_types: dict[str, str],
    misfits: dict[str, tuple[int, str]],
    fix: str = SEED_FIX,
    text: bool = True,
) -> ConfigError:
    """One line per column whose values do not fit its type (with the value's line when the
    file is ``text``)."""

    shown = _shown(path)
    lines = []
    for column, (count, value) in misfits.items():
        line = line_of_value(path, column, value) if text else None
        where = f"{shown}:{line}" if line else shown
        more = f" ({count} rows do not fit)" if count > 1 else ""
        lines.append(
            f"{where}: [{column}] value '{value}' is not a valid "
            f"{column_types[column]}{more}; {fix}"
        )
    return ConfigError("\n".join(lines))


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)

"""CSV seeds into Iceberg tables: values checked against their declared types, then one
atomic replace (skipped when the table already holds the file)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from lakewide.errors import ConfigError, ModelRunError
from lakewide.nodes import Relation
from lakewide.spark.errors import short
from lakewide.spark.table_metadata import MetadataReads

SEED_DIGEST = "lakewide.seed-sha256"


class SeedLoading(MetadataReads):
    """Loads CSV seeds; a checked seed's DataFrame is kept for its load."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seed_frames: dict[str, Any] = {}  # checked seed frames by digest

    def load_csv(self, path: Path, relation: Relation, column_types: dict[str, str]) -> int | None:
        """Replace ``relation`` with the CSV's rows (header, inferred types, overrides).

        Returns None (and writes nothing) when the table already holds this exact file, so
        downstream incremental models see no new snapshot. A value that does not fit its
        declared type is a ConfigError raised before the table is touched.
        """
        from lakewide.spark.commit import commit_with_properties

        marker = {SEED_DIGEST: _seed_digest(path, column_types)}
        if self._seed_unchanged(relation, marker[SEED_DIGEST]):
            return None
        frame = self._seed_frame(path, column_types)
        self.ensure_namespace(relation)
        try:
            commit_with_properties(
                self.spark,
                marker,
                lambda: frame.writeTo(str(relation)).using("iceberg").createOrReplace(),
            )
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(short(err), path=path) from err
        return int(self.spark.table(str(relation)).count())

    def check_seed(self, path: Path, relation: Relation, column_types: dict[str, str]) -> None:
        """Raise ConfigError when a value of a changed seed does not fit its declared type
        (one Spark query; ``load_csv`` then reuses the checked frame)."""
        if not self._seed_unchanged(relation, _seed_digest(path, column_types)):
            self._seed_frame(path, column_types)

    def _seed_unchanged(self, relation: Relation, digest: str) -> bool:
        return (
            self.table_exists(relation)
            and self.snapshot_summary(relation).get(SEED_DIGEST) == digest
        )

    def _seed_frame(self, path: Path, column_types: dict[str, str]) -> Any:
        """The CSV as a DataFrame: inferred types, declared columns read as text and cast.

        Every declared column is checked in one query: a non-empty value whose cast is NULL
        does not fit (a ConfigError naming file, line, column, value and type).
        """
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        key = _seed_digest(path, column_types)
        if key in self._seed_frames:
            return self._seed_frames[key]
        misfits: dict[str, tuple[int, str]] = {}
        try:
            frame = self._read_csv(path, None)
            if column_types:
                text = StructType(
                    [
                        StructField(f.name, StringType()) if f.name in column_types else f
                        for f in frame.schema.fields
                    ]
                )
                frame = self._read_csv(path, text)
                misfits = _misfits(frame, column_types)
                frame = frame.select(
                    *(
                        F.col(_quoted(f.name)).cast(column_types[f.name]).alias(f.name)
                        if f.name in column_types
                        else F.col(_quoted(f.name))
                        for f in frame.schema.fields
                    )
                )
        except Exception as err:  # noqa: BLE001
            raise ModelRunError(short(err), path=path) from err
        if misfits:
            raise _misfit_error(path, column_types, misfits)
        self._seed_frames[key] = frame
        return frame

    def _read_csv(self, path: Path, schema: Any) -> Any:
        """The CSV parsed by Spark's CSV reader (header; ``schema``, else inferred types) from
        lines read here, on the driver: the executors never open the project's files, which
        the workers of a cluster do not see. The lines become a local relation in the plan
        (no Python on the executors) split as Spark's file reader splits them."""
        from pyspark.sql import DataFrame

        text = path.read_text(encoding="utf-8-sig")
        lines = _LINE_BREAK.split(text.removesuffix("\n").removesuffix("\r"))
        encoders = self.spark.sparkContext._jvm.org.apache.spark.sql.Encoders
        dataset = self.spark._jsparkSession.createDataset(lines, encoders.STRING())
        reader = self.spark.read.option("header", True)
        reader = reader.schema(schema) if schema is not None else reader.option("inferSchema", True)
        return DataFrame(reader._jreader.csv(dataset), self.spark)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _seed_digest(path: Path, column_types: dict[str, str]) -> str:
    data = path.read_bytes() + repr(sorted(column_types.items())).encode()
    return hashlib.sha256(data).hexdigest()


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _misfits(frame: Any, column_types: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Per declared column: (rows that do not fit, the first such value in file order)."""
    from pyspark.sql import functions as F

    row = "__lakewide_row"
    framed = frame.withColumn(row, F.monotonically_increasing_id())
    aggregates = []
    for column, type_name in column_types.items():
        value = F.col(_quoted(column))
        bad = value.isNotNull() & value.cast(type_name).isNull()
        aggregates += [F.count(F.when(bad, 1)), F.min_by(value, F.when(bad, F.col(row)))]
    found = framed.agg(*aggregates).collect()[0]
    return {
        column: (found[2 * i], found[2 * i + 1])
        for i, column in enumerate(column_types)
        if found[2 * i]
    }


def _misfit_error(
    path: Path, column_types: dict[str, str], misfits: dict[str, tuple[int, str]]
) -> ConfigError:
    """One line per column whose values do not fit its declared type."""
    from lakewide.seeds import line_of_value

    shown = _shown(path)
    lines = []
    for column, (count, value) in misfits.items():
        line = line_of_value(path, column, value)
        where = f"{shown}:{line}" if line else shown
        more = f" ({count} rows do not fit)" if count > 1 else ""
        lines.append(
            f"{where}: [{column}] value '{value}' is not a valid "
            f"{column_types[column]}{more}; fix the value or the type declared for "
            "this column in the seed types file"
        )
    return ConfigError("\n".join(lines))


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)

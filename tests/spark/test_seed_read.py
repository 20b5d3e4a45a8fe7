"""Seeds are read on the driver: a cluster's executors never open the project's CSV files, and
the rows are the ones Spark's own CSV file reader finds in the same file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.spark.adapter import SparkAdapter
from tests.integration.conftest import null_first

pytestmark = pytest.mark.spark

CSV_TEXTS = {
    "plain": 'id,name,amount,day\n1,Ada,2.5,2024-05-01\n2,"Hopper, G",3,\n3,,-1,2024-05-03\n',
    "crlf": "id,v\r\n1,a\r\n2,b\r\n",
    "cr": "id,v\r1,a\r2,b\r",
    "blank lines": "id,v\n\n1,a\n\n2,b\n\n",
    "no final newline": "id,v\n1,a\n2,b",
    "header only": "id,v\n",
}


def _table(frame: Any) -> tuple[list[tuple[str, str]], list[tuple]]:
    return frame.dtypes, sorted((tuple(r) for r in frame.collect()), key=null_first)


@pytest.mark.parametrize("text", CSV_TEXTS.values(), ids=CSV_TEXTS.keys())
def test_seed_rows_are_spark_csv_rows_read_once_on_the_driver(
    tmp_path: Path, warehouse: Path, spark: Any, text: str
) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(text.encode())
    # what Spark's CSV reader makes of the file's text when it opens it itself (executors)
    expected = _table(spark.read.csv(str(path), header=True))
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    header = text.splitlines()[0].split(",")
    frame = adapter._seed_frame(path, dict.fromkeys(header, "string"))
    path.unlink()  # the frame holds the lines: nothing reads the file again
    assert _table(frame) == expected


def test_seed_with_declared_types_and_a_bom(tmp_path: Path, warehouse: Path, spark: Any) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes("\ufeffzip,n\n00123,7\n,8\n".encode())
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    frame = adapter._seed_frame(path, {"zip": "string", "n": "int"})
    path.unlink()
    assert _table(frame) == ([("zip", "string"), ("n", "int")], [(None, 8), ("00123", 7)])


def test_seed_keeps_what_spark_would_mistype(tmp_path: Path, warehouse: Path, spark: Any) -> None:
    """``T1`` ids, ``1e5`` codes, ``00123`` zips, ``yes`` answers and non-ISO dates load as the
    text written; canonical values get their types (lakewide.project.text_types)."""
    from lakewide.project.seeds import find_seeds
    from tests.support.project_factory import make_project, manifest_of

    text = (
        "ticket_id,code,zip,flag,answer,day,us_day,at\n"
        "T1,1e5,00123,true,yes,2024-05-01,05/01/2024,2024-05-01 10:00\n"
        "T2,2e5,02134,FALSE,true,2024-02-29,12/31/2024,2024-05-01T10:00:00.5\n"
    )
    root = make_project(tmp_path, {"seeds/odd.csv": text})
    manifest = manifest_of(root)
    [seed] = find_seeds(manifest.project, manifest.output)
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    relation = Relation("lw", "seed_types", "odd")
    assert adapter.load_csv(seed.path, relation, seed.types) == ("created", 2)
    frame = spark.table(str(relation))
    assert dict(frame.dtypes) == {
        "ticket_id": "string",
        "code": "string",
        "zip": "string",
        "flag": "boolean",
        "answer": "string",
        "day": "date",
        "us_day": "string",
        "at": "timestamp",
    }
    rows = sorted((tuple(str(v) for v in r) for r in frame.collect()), key=lambda r: r[0])
    assert rows == [
        ("T1", "1e5", "00123", "True", "yes", "2024-05-01", "05/01/2024", "2024-05-01 10:00:00"),
        (
            "T2",
            "2e5",
            "02134",
            "False",
            "true",
            "2024-02-29",
            "12/31/2024",
            "2024-05-01 10:00:00.500000",
        ),
    ]

"""Seeds are read on the driver: a cluster's executors never open the project's CSV files, and
the rows are the ones Spark's own CSV file reader finds in the same file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.profiles import Output
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
    # what Spark's CSV reader makes of the file when it opens it itself (on the executors)
    expected = _table(spark.read.csv(str(path), header=True, inferSchema=True))
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    frame = adapter._seed_frame(path, {})
    path.unlink()  # the frame holds the lines: nothing reads the file again
    assert _table(frame) == expected


def test_seed_with_declared_types_and_a_bom(tmp_path: Path, warehouse: Path, spark: Any) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes("\ufeffzip,n\n00123,7\n,8\n".encode())
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    frame = adapter._seed_frame(path, {"zip": "string"})
    path.unlink()
    assert _table(frame) == ([("zip", "string"), ("n", "int")], [(None, 8), ("00123", 7)])

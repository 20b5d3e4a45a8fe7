"""A read-only pyiceberg FileIO for metadata files on local disk (plain paths, ``file:`` URIs).

pyiceberg's own FileIOs need pyarrow or fsspec with their dependencies (a large import, or not
installed at all); lakewide only reads a table's metadata JSON file through pyiceberg's SQL
catalog (lakewide.sql_catalog), and for a local warehouse opening the file is all it takes.
Remote locations (``s3://``, ``hdfs://``) are refused with what to install instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyiceberg.io import FileIO, InputFile, InputStream, OutputFile

from lakewide.metadata import warehouse_path

IMPL = "lakewide.local_io.LocalFileIO"  # pyiceberg's ``py-io-impl`` property


def _local(location: str) -> Path:
    path = warehouse_path(location)
    if path is None:
        raise ValueError(
            f"{location} is not on local disk; to read remote metadata without Spark install "
            "pyiceberg's FileIO for it: pip install 'pyiceberg[pyarrow]'"
        )
    return path


class LocalInputFile(InputFile):
    """A local file pyiceberg reads (the metadata JSON)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.path = _local(location)

    def __len__(self) -> int:
        return self.path.stat().st_size

    def exists(self) -> bool:
        return self.path.is_file()

    def open(self, seekable: bool = True) -> InputStream:
        stream: Any = self.path.open("rb")  # a BufferedReader is an InputStream
        return stream  # type: ignore[no-any-return]


class LocalFileIO(FileIO):
    """Reads local files; writes nothing (lakewide writes only through Spark)."""

    def new_input(self, location: str) -> InputFile:
        return LocalInputFile(location)

    def new_output(self, location: str) -> OutputFile:
        raise NotImplementedError(f"lakewide reads {location} only; Spark writes tables")

    def delete(self, location: str | InputFile | OutputFile) -> None:
        raise NotImplementedError("lakewide reads metadata only; Spark writes tables")

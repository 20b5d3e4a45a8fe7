"""The pyiceberg FileIO lakewide gives its REST catalog client (``py-io-impl``).

A REST catalog sends a table's metadata in its answer to ``load_table``, and lakewide reads
nothing else without Spark; this FileIO spares pyiceberg the pyarrow or fsspec FileIO it would
otherwise load for the metadata reads. Imported only by pyiceberg, on demand (``show`` reads
data files with a FileIO of its own: lakewide.state.table_rows).
"""

from __future__ import annotations

from pyiceberg.io import FileIO, InputFile, OutputFile


class MetadataOnlyFileIO(FileIO):
    """Refuses every file operation: metadata came inline, data is Spark's to read."""

    def new_input(self, location: str) -> InputFile:
        """Refused (OSError): lakewide reads no file through pyiceberg on a REST catalog."""
        raise OSError(f"lakewide reads no file without Spark ({location})")

    def new_output(self, location: str) -> OutputFile:
        """Refused (OSError): lakewide writes through Spark only."""
        raise OSError(f"lakewide writes no file without Spark ({location})")

    def delete(self, location: str | InputFile | OutputFile) -> None:
        """Refused (OSError): lakewide deletes through Spark only."""
        raise OSError(f"lakewide deletes no file without Spark ({location})")

"""The changes of a copy-on-write commit to a table that keeps row lineage (format 3).

A copy-on-write commit rewrites whole data files: every row of a file it touched is removed
and written again, the few it changed among many carried over unchanged. Iceberg's changelog
scan tells them apart by shuffling and sorting every row of both sides. A format-3 table keeps
each row's ``_row_id`` when the row is rewritten, and ``_last_updated_sequence_number`` names
the commit that last wrote it, so between a commit ``b`` (sequence number ``s``) and its parent:

* a row of a file ``b`` added, last written at ``s``, was written by ``b``: an INSERT (an
  update's new image, or a new row);
* a row of a file ``b`` removed whose ``_row_id`` is not carried over (not among the rows of
  ``b``'s new files last written before ``s``) was deleted or updated by ``b``: a DELETE
  carrying its old image;
* an update's old and new image that are equal (a row rewritten unchanged) are no change, as
  in Iceberg's changelog.

It reads the new files once whole and once narrow (ids, sequence numbers), and the removed
files once, keeping the rows whose ids were not carried over (an anti-join with the carried-over
ids broadcast). Where the commit's row counts show it deleted no row, the ids that left are
those of the rows it updated, found among the rows it wrote: the narrow read is skipped. A
removed row without an id (a file written before the table was upgraded to format 3) cannot be
paired: then the commit is not read this way (``lineage_parts`` returns None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ROW_ID, UPDATED = "_row_id", "_last_updated_sequence_number"


def column(name: str) -> Any:
    """The Spark column ``name``, quoted (any name a table may have)."""
    from pyspark.sql import functions as f

    return f.col("`" + name.replace("`", "``") + "`")


@dataclass(frozen=True)
class Counts:
    """What a commit's snapshot summary and file list say of its rows: the rows live at the
    parent in the files it removed (the parent has no delete files), the rows of the files it
    added, and the smallest first row id among those (ids from it on are rows new to the
    table)."""

    removed: int
    added: int
    fresh: int


def _old_images(
    added: Any, removed: Any, sequence: int, written: Any, counts: Counts | None
) -> Any:
    """The removed rows the commit did not carry over (deleted or updated), with their old
    images. Where the counts show it deleted no row (removed = added - inserted), their ids are
    those of the rows it wrote that are not new: no look at the carried-over rows at all."""
    from pyspark.sql import functions as f

    if counts is not None:
        inserted = written.where(f.col(ROW_ID) >= counts.fresh).count()
        if counts.removed - counts.added + inserted == 0:
            updated = written.where(f.col(ROW_ID) < counts.fresh).select(ROW_ID)
            return removed.join(f.broadcast(updated), ROW_ID, "left_semi").localCheckpoint(
                eager=True
            )
    kept = added.where(f.col(UPDATED) != sequence).select(ROW_ID)
    # the carried-over ids (about every row) broadcast: no shuffle of either side; the removed
    # rows read once (a row without an id is kept: it cannot have been carried over by id)
    return removed.join(f.broadcast(kept), ROW_ID, "left_anti").localCheckpoint(eager=True)


def lineage_parts(
    added: Any,
    removed: Any,
    sequence: int,
    columns: list[str],
    ids: bool | None = None,
    counts: Counts | None = None,
) -> list[tuple[Any, str]] | None:
    """Commit ``b``'s changed rows as ``(frame, kind)`` parts: ``added``, the rows of the files
    ``b`` added, and ``removed``, the rows live at its parent of the files it removed, each
    with ``columns`` (those it has) and ``_row_id`` (``added`` also its last-updated sequence
    number); ``sequence``: ``b``'s. ``ids``: whether every removed row has an id (every removed
    file has a first row id), None where unknown (then the rows are looked at); ``counts``:
    the commit's row counts where known (``Counts``). None where a removed row has no id."""
    from pyspark.sql import functions as f

    if ids is False:
        return None
    written = added.where(f.col(UPDATED) == sequence).localCheckpoint(eager=True)
    old = _old_images(added, removed, sequence, written, counts if ids else None)
    if ids is None and old.where(f.col(ROW_ID).isNull()).limit(1).count():
        return None
    both = [c for c in columns if c in written.columns and c in old.columns]
    same = (
        written.select(column(ROW_ID), *map(column, both))
        .intersect(old.select(column(ROW_ID), *map(column, both)))
        .select(ROW_ID)
        .localCheckpoint(eager=True)
    )
    return [
        (written.join(f.broadcast(same), ROW_ID, "left_anti"), "INSERT"),
        (old.join(f.broadcast(same), ROW_ID, "left_anti"), "DELETE"),
    ]

"""Old images of a merge-on-read commit: every column the model reads, or the key and sequence.

One source table of ``generate.py`` (``keys`` rows, 4 value columns), merge-on-read (``--mode``
mor-v2: position delete files; mor-v3: deletion vectors), then two ``MERGE`` commits as a CDC
mirror makes them (benchmarks/cdc_mirrors.py): 1% of the keys updated, spread over the table,
and 0.2% deleted. The second commit is read (its parent has deletes already, as in a mirror's
steady state) the way lakewide reads it (lakewide.spark.position_changes), in parts, each
materialized (``localCheckpoint``, as a run does), alternated, ``rounds`` times:

* ``old_every``: the old images of the rows the commit deleted, with every column (what
  lakewide reads): the table at the parent scanned, joined with the commit's new deleted
  positions (broadcast);
* ``old_k_seq``: the same rows with the key and sequence only (the columns a partial_update
  model with ``remove_record_on_delete`` needs of a deleted row; ``sum`` needs every value);
* ``new_rows``: the data files the commit added, read alone (a staged scan);
* ``scan``: the table's current rows read once: what the JOIN rebuild reads of this source.

    PYTHONPATH=$PWD python benchmarks/position_read_columns.py --keys 1000000 5000000
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import read_rounds  # noqa: E402

#: ``MERGE`` commits before the read; the read is of the last, whose parent has deletes
COMMITS = 2


def _part(parts: list[tuple[Any, str]], kind: str) -> Any:
    [frame] = [frame for frame, of in parts if of == kind]
    return frame


def bench_mode(out: Path, keys: int, rounds: int, mode: str) -> dict[str, Any]:
    m = read_rounds.mirrored(out, keys, f"position_read_columns_{mode}", mode, COMMITS)
    spark, clock, table, adapter = m.spark, m.clock, m.table, m.adapter
    relation, meta, end, after = m.relation, m.meta, m.end, m.after
    every = list(spark.table(table).columns)

    def parts(columns: list[str]) -> list[tuple[Any, str]]:
        return adapter._positional_parts(relation, meta, after, end, (columns, columns))

    frames = {
        "old_every": lambda: _part(parts(every), "DELETE"),
        "old_k_seq": lambda: _part(parts(["k", "seq"]), "DELETE"),
        "new_rows": lambda: _part(parts(every), "INSERT"),
        "scan": lambda: spark.table(table),
    }
    rows = {name: make().localCheckpoint(eager=True) for name, make in frames.items()}
    wide, narrow = (rows[name].select("k", "seq") for name in ("old_every", "old_k_seq"))
    same = wide.exceptAll(narrow).count() == 0 and narrow.exceptAll(wide).count() == 0
    counts = {name: frame.count() for name, frame in rows.items()}
    seconds, medians = read_rounds.timed_reads(clock, frames, rounds, adapter.unstage)
    spark.stop()
    return {
        "keys": keys,
        "mode": mode,
        "upstream_commit": m.wrote,
        "rows": counts,
        "equal": same,
        "seconds": seconds,
        "medians": medians,
    }


def bench_size(out: Path, keys: int, rounds: int) -> list[dict[str, Any]]:
    return [bench_mode(out, keys, rounds, mode) for mode in ("mor-v2", "mor-v3")]


def markdown(results: list[list[dict[str, Any]]]) -> str:
    lines = [
        "| keys | mode | old images | old images: every column s (cpu) | key and sequence s "
        "(cpu) | narrow x every, cpu | new rows s (cpu) | scan of the table s (cpu) | equal |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size in results:
        for r in size:
            m = r["medians"]
            cells = {n: f"{m[n]['s']:.1f} ({m[n]['cpu']:.1f})" for n in m}
            lines.append(
                f"| {r['keys']:,} | {r['mode']} | {r['rows']['old_every']:,} "
                f"| {cells['old_every']} | {cells['old_k_seq']} "
                f"| {m['old_k_seq']['cpu'] / m['old_every']['cpu']:.2f} | {cells['new_rows']} "
                f"| {cells['scan']} | {r['equal']} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    read_rounds.main(__doc__, "position_read_columns", bench_size, markdown)

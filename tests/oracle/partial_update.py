"""A plain-Python reference of partial-update semantics (shares no code with lakewide).

Records are dicts. ``key`` names the primary-key columns, ``seq`` the sequence fields. A run is
a list of batches; each batch is a list of (source_index, record) pairs, where a record holds
only the columns its source owns (plus key and sequence fields).

* Within one fold, records apply in order of (sequence with None oldest, source, arrival);
  a non-null value overwrites, a null never does.
* Merging a folded batch into a stored row: a non-null incoming value replaces the stored one
  when the stored one is null or the incoming sequence is >= the stored sequence (ties: the
  incoming row arrived later); the stored sequence follows the same rule.
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


def _seq_key(record: Record, seq: list[str]) -> tuple:
    # (0,) sorts before (1, value): None is the oldest sequence value.
    return tuple((0,) if record.get(f) is None else (1, record[f]) for f in seq)


def _fold(records: list[tuple[int, int, Record]], key: list[str], seq: list[str]) -> dict:
    """Fold (source, arrival, record) triples per key, in sequence order."""
    out: dict[tuple, Record] = {}
    for _, _, record in sorted(records, key=lambda t: (_seq_key(t[2], seq), t[0], t[1])):
        k = tuple(record[c] for c in key)
        if any(v is None for v in k):
            continue
        row = out.setdefault(k, {c: record[c] for c in key})
        for column, value in record.items():
            if column in seq:
                row[column] = value  # sequence of the latest record, null included
            elif value is not None:
                row[column] = value
    return out


def bootstrap(records: list[tuple[int, Record]], key: list[str], seq: list[str]) -> dict:
    """All records folded at once (what the bootstrap plan computes)."""
    return _fold([(s, i, r) for i, (s, r) in enumerate(records)], key, seq)


def _incoming_wins(new: Record, old: Record, seq: list[str]) -> bool:
    if not seq:
        return True
    return _seq_key(new, seq) >= _seq_key(old, seq)


def incremental(
    batches: list[list[tuple[int, Record]]], key: list[str], seq: list[str], sources: int
) -> dict:
    """Batches applied one after another, each source's part folded then merged in order."""
    table: dict[tuple, Record] = {}
    for batch in batches:
        for source in range(sources):
            part = [(source, i, r) for i, (s, r) in enumerate(batch) if s == source]
            for k, new in _fold(part, key, seq).items():
                old = table.get(k)
                if old is None:
                    table[k] = dict(new)
                    continue
                wins = _incoming_wins(new, old, seq)
                for column, value in new.items():
                    if column in key:
                        continue
                    if column in seq:
                        if wins:
                            old[column] = value
                    elif value is not None and (old.get(column) is None or wins):
                        old[column] = value
    return table


def as_rows(table: dict, columns: list[str]) -> list[tuple]:
    """The table as sorted tuples over ``columns`` (missing columns are NULL)."""
    rows = [tuple(row.get(c) for c in columns) for row in table.values()]
    return sorted(rows, key=lambda r: tuple((v is not None, v) for v in r))

"""A pure-Python reference of lakewide's merge engines, written from docs/concepts/merge-engines.md only.

It shares no code with ``lakewide.compiler``. The model is described by a :class:`Spec`; a
record is ``(source_index, {column: value})``. The columns a source owns are ``Spec.owned`` of
that source (or, when ``owned`` is None, the keys present in the record's dict); a column the
source does not own is *absent* from its records, which is different from a NULL value.

* :func:`bootstrap` folds all records (all sources, one batch) into an empty table: the plain
  fold in place order ``(sequence, source, arrival)``. The contract says every split of the
  records into runs gives this table; the property tests hold lakewide's runs to it.
* :func:`incremental` is the per-run rule: it runs batches one after another (the first run
  bootstraps on the first batch; every later run applies the sources in branch order, each
  source's part folded to one state per key and merged into the stored row judged by the
  row-level sequence). It is the reference only where the docs state that results depend
  on run boundaries (sequence groups, removed rows, element order of listagg/collect/merge_map).

Both return ``{key_tuple: {stored_column: value}}`` (every stored column present, NULL = None).

Readings of the contract where it is ambiguous (closest to Apache Paimon; see the test report):

* ``last_value`` keeps NULLs in the merge too ("s when wins", NULL included), as Paimon does:
  the general "a NULL never turns a value into NULL" rule does not apply to it; ``first_value``
  and all other functions use ``COALESCE(f(t, s), t, s)``.
* ``sum`` retracting from "no value" gives the negated value (Paimon). ``product`` folds a
  batch to (product of adds, product of retracts) and merges as ``t * adds / retracts``
  (``1 / retracts`` from "no value"; integer division truncates as in Java). Only exact
  divisions are order-independent, so the property tests retract only +-1.
* ``collect``/``merge_map``: records apply one by one in record order, as Paimon applies
  them: a ``collect`` retract removes, per retracted element, its first occurrence in what has
  been collected so far (a multiset difference; later records are not touched); a ``merge_map``
  retract removes the retracted map's keys. A batch's records replay on the stored value
  (``t`` then ``s``); removing every element leaves an empty array, not NULL; retracting from
  "no value" stays "no value"; ``distinct`` keeps first occurrences after every add.
* ``last_non_null_value``: a batch whose last event is a retract of a non-null value clears the
  stored value when it wins.
* partial_update with ``sequence_groups``: a key whose records are all retracts is still a new
  key and gets inserted (its retracted groups NULL, their sequences set): the contract's "a new
  key is inserted with the folded values". Paimon emits no row for a key that has met no insert
  yet, but keeps the records in its LSM tree, so a later insert still sees the retract; a table
  that stores one row per key must keep the retract's effect in a row, or incremental and
  bootstrap results would differ. Retracts never touch columns in no group nor the row-level
  sequence fields.
* In a sequence group, a participating record of a source that does not own some of the
  group's columns sets those columns to NULL (Paimon writes whole rows; "nulls included").
* aggregation: sequence fields are "those of the last record" (retracts included unless
  dropped by ``ignore_delete``) and replaced when the incoming fold wins, as in partial_update.
* deduplicate with ``ignore_delete`` drops retracts before anything else.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Record = dict[str, Any]
Table = dict[tuple, dict[str, Any]]

ADD_KINDS = {"+I": "+I", "+U": "+U", "INSERT": "+I", "UPDATE_AFTER": "+U"}
RETRACT_KINDS = {"-U": "-U", "-D": "-D", "UPDATE_BEFORE": "-U", "DELETE": "-D"}

#: functions whose retraction the contract defines
RETRACTABLE = {"sum", "product", "last_value", "last_non_null_value", "collect", "merge_map"}
FUNCTIONS = {
    "sum",
    "product",
    "max",
    "min",
    "last_value",
    "last_non_null_value",
    "first_value",
    "first_non_null_value",
    "listagg",
    "bool_and",
    "bool_or",
    "collect",
    "merge_map",
}


class SpecError(ValueError):
    """A configuration the contract rejects at compile time."""


@dataclass(frozen=True)
class Agg:
    """One column's aggregate function and its options."""

    function: str
    delimiter: str = ","
    distinct: bool = False
    ignore_retract: bool = False


@dataclass
class Spec:
    """A model: engine, columns (first branch names them), per-source owned columns, options.

    ``groups`` maps a group's sequence column(s) (``"g_1"`` or ``"g_2,g_3"``) to the columns it
    guards. ``aggregates`` values are function names or :class:`Agg`. ``owned[i]`` is the set of
    columns source ``i`` owns (primary key, sequence fields and row kind are always owned).
    """

    engine: str
    key: list[str]
    columns: list[str]
    owned: list[set[str]] | None = None
    sequence: list[str] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)
    aggregates: dict[str, Agg | str] = field(default_factory=dict)
    default_aggregate: str | None = None
    ignore_delete: bool = False
    ignore_update_before: bool = False
    remove_record_on_delete: bool = False
    remove_record_on_sequence_group: list[str] = field(default_factory=list)
    row_kind_column: str | None = None

    # -- derived ---------------------------------------------------------------------------
    @property
    def stored(self) -> list[str]:
        return [c for c in self.columns if c != self.row_kind_column]

    def group_list(self) -> list[tuple[str, list[str], list[str]]]:
        """(name, sequence columns, guarded columns) per group."""
        return [
            (name, [s.strip() for s in name.split(",") if s.strip()], list(cols))
            for name, cols in self.groups.items()
        ]

    def agg(self, column: str) -> Agg:
        value = self.aggregates.get(column)
        if value is None:
            value = self.default_aggregate or "last_non_null_value"
        return Agg(value) if isinstance(value, str) else value

    def retracts_possible(self) -> bool:
        return self.row_kind_column is not None and not self.ignore_delete

    def owns(self, source: int, record: Record) -> set[str]:
        base = set(self.owned[source]) if self.owned is not None else set(record)
        return (
            base
            | set(self.key)
            | set(self.sequence)
            | ({self.row_kind_column} if self.row_kind_column else set())
        )

    def validate(self) -> None:
        """The contract's compile errors (only those the oracle depends on)."""
        if self.engine not in ("partial_update", "aggregation", "deduplicate", "first_row"):
            raise SpecError(f"unknown engine {self.engine}")
        if self.ignore_delete and self.remove_record_on_delete:
            raise SpecError("ignore_delete with remove_record_on_delete")
        if self.remove_record_on_delete and self.groups:
            raise SpecError("remove_record_on_delete with sequence_groups")
        seen: set[str] = set()
        for _name, seqs, cols in self.group_list():
            for c in seqs:
                if c not in self.columns:
                    raise SpecError(f"group sequence {c} is not a column")
            for c in cols:
                if c in self.key:
                    raise SpecError(f"primary-key column {c} in a sequence group")
                if c in seen:
                    raise SpecError(f"column {c} in two groups")
                seen.add(c)
        for g in self.remove_record_on_sequence_group:
            if g not in self.groups:
                raise SpecError(f"remove_record_on_sequence_group names no group: {g}")
        if self.engine == "partial_update":
            if self.default_aggregate not in (None, "last_non_null_value"):
                fixed = {
                    *self.key,
                    *self.sequence,
                    self.row_kind_column,
                    *(q for _, seqs, _ in self.group_list() for q in seqs),
                }
                if any(
                    c not in fixed and c not in seen and c not in self.aggregates
                    for c in self.stored
                ):
                    raise SpecError("default_aggregate with a column in no group")
            for c in self.aggregates:
                if self.agg(c).function != "last_non_null_value" and c not in seen:
                    raise SpecError(f"aggregate on {c}, which is in no group")
            if self.row_kind_column and not (
                self.ignore_delete or self.remove_record_on_delete or self.groups
            ):
                raise SpecError(
                    "row_kind_column needs ignore_delete, remove_record_on_delete "
                    "or sequence_groups"
                )
        if self.engine == "first_row":
            if self.sequence:
                raise SpecError("sequence_field with first_row")
            if self.row_kind_column and not self.ignore_delete:
                raise SpecError("first_row with a row_kind_column needs ignore_delete")
        agg_columns: Iterable[str] = ()
        if self.engine == "aggregation":
            agg_columns = [c for c in self.stored if c not in self.key and c not in self.sequence]
        elif self.engine == "partial_update":
            agg_columns = [
                c
                for c in self.stored
                if c in seen and (c in self.aggregates or self.default_aggregate)
            ]
        for c in agg_columns:
            a = self.agg(c)
            if a.function not in FUNCTIONS:
                raise SpecError(f"unknown aggregate function {a.function}")
            if self.retracts_possible() and a.function not in RETRACTABLE and not a.ignore_retract:
                raise SpecError(f"{a.function} on {c} refuses retracts (use ignore_retract)")


# ---------------------------------------------------------------------------------------------
# records and order


@dataclass
class Rec:
    source: int
    arrival: int
    values: Record  # owned columns only (absent = not owned)
    kind: str  # +I +U -U -D

    @property
    def retract(self) -> bool:
        return self.kind in ("-U", "-D")


def seq_key(values: tuple) -> tuple:
    """Sort key of a sequence tuple, field by field, NULL the oldest value."""
    return tuple((0,) if v is None else (1, v) for v in values)


def _kind(spec: Spec, values: Record) -> str:
    if not spec.row_kind_column:
        return "+I"
    raw = values.get(spec.row_kind_column)
    if raw in ADD_KINDS:
        return ADD_KINDS[raw]
    if raw in RETRACT_KINDS:
        return RETRACT_KINDS[raw]
    raise ValueError(f"unknown row kind {raw!r}")


def _records(spec: Spec, pairs: list[tuple[int, Record]]) -> list[Rec]:
    """(source, dict) pairs in arrival order -> Recs with per-source arrival; NULL keys dropped."""
    counters: dict[int, int] = {}
    out = []
    for source, record in pairs:
        arrival = counters.get(source, 0)
        counters[source] = arrival + 1
        owned = spec.owns(source, record)
        values = {c: record.get(c) for c in owned if c in spec.columns}
        if any(values.get(k) is None for k in spec.key):
            continue
        kind = _kind(spec, values)
        if spec.ignore_update_before and kind == "-U":  # dropped before anything else
            continue
        out.append(Rec(source, arrival, values, kind))
    return out


def _seq(spec: Spec, rec: Rec) -> tuple:
    return tuple(rec.values.get(c) for c in spec.sequence)


def _ordered(spec: Spec, recs: list[Rec]) -> list[Rec]:
    return sorted(recs, key=lambda r: (seq_key(_seq(spec, r)), r.source, r.arrival))


def _key(spec: Spec, rec: Rec) -> tuple:
    return tuple(rec.values[k] for k in spec.key)


def _wins(spec: Spec, incoming: tuple, stored: tuple) -> bool:
    if not spec.sequence:
        return True
    return seq_key(incoming) >= seq_key(stored)


# ---------------------------------------------------------------------------------------------
# aggregate functions: fold state per batch, merge into a stored value


class _Fold:
    """Fold state of one column over one batch (records in order)."""

    def __init__(self, agg: Agg) -> None:
        self.agg = agg
        self.f = agg.function
        self.value: Any = None  # accumulated value (None = no value)
        self.set = False  # last_value / first_value: a record was seen
        self.cleared = False  # last_non_null_value: last event was a retract
        self.ops: list = []  # collect / merge_map: (retract?, value) in order
        self.tokens: list[str] = []  # listagg
        self.divisor: Any = None  # product: product of the retracted values

    def add(self, v: Any) -> None:
        f = self.f
        if f == "last_value":
            self.value, self.set = v, True
            return
        if f == "first_value":
            if not self.set:
                self.value, self.set = v, True
            return
        if v is None:
            return
        if f == "sum":
            self.value = v if self.value is None else self.value + v
        elif f == "product":
            self.value = v if self.value is None else self.value * v
        elif f == "max":
            self.value = v if self.value is None else max(self.value, v)
        elif f == "min":
            self.value = v if self.value is None else min(self.value, v)
        elif f == "last_non_null_value":
            self.value, self.cleared = v, False
        elif f == "first_non_null_value":
            if self.value is None:
                self.value = v
        elif f == "listagg":
            if not _blank(v):  # Paimon's FieldListaggAgg drops blank inputs
                self.tokens.append(v)
        elif f == "bool_and":
            self.value = v if self.value is None else (self.value and v)
        elif f == "bool_or":
            self.value = v if self.value is None else (self.value or v)
        elif f in ("collect", "merge_map"):
            self.ops.append((False, v))
        else:
            raise SpecError(f"unknown aggregate function {f}")

    def retract(self, v: Any) -> None:
        f = self.f
        if f == "last_value":
            self.value, self.set = None, True
            return
        if v is None:
            return
        if f == "sum":
            self.value = -v if self.value is None else self.value - v
        elif f == "product":
            self.divisor = v if self.divisor is None else self.divisor * v
        elif f == "last_non_null_value":
            self.value, self.cleared = None, True
        elif f in ("collect", "merge_map"):
            self.ops.append((True, v))
        else:
            raise SpecError(f"{f} refuses retracts")

    def result(self) -> Any:
        """The folded value alone (what a bootstrap into an empty table stores)."""
        return self.merge(None, True)

    def merge(self, t: Any, wins: bool) -> Any:
        f = self.f
        if f == "listagg":
            if t is not None and _blank(t):  # Paimon: a blank accumulator is no value
                t = None
            if not self.tokens:
                return t
            s = self.agg.delimiter.join(self.tokens)
            if self.agg.distinct:
                s = _distinct_tokens(s, self.agg.delimiter)
                if not s:  # only blank values: no value
                    return t
            joined = (
                s
                if t is None
                else (f"{t}{self.agg.delimiter}{s}" if wins else f"{s}{self.agg.delimiter}{t}")
            )
            return _distinct_tokens(joined, self.agg.delimiter) if self.agg.distinct else joined
        if f == "collect":
            acc = None if t is None else list(t)
            for retract, v in self.ops:
                if retract:
                    acc = None if acc is None else _remove_first(acc, v)
                else:
                    acc = list(v) if acc is None else acc + list(v)
                    acc = _distinct(acc) if self.agg.distinct else acc
            return acc
        if f == "merge_map":
            acc = None if t is None else dict(t)
            for retract, v in self.ops:
                if retract:
                    acc = None if acc is None else {k: x for k, x in acc.items() if k not in v}
                else:
                    acc = dict(v) if acc is None else {**acc, **v}
            return acc
        if f == "last_value":
            if not self.set:
                return t
            return self.value if wins else t
        if f == "last_non_null_value":
            if self.cleared:
                return None if wins else t
            if self.value is None:
                return t
            return self.value if (t is None or wins) else t
        if f == "first_value":
            if not self.set:
                return t
            out = self.value if (t is None or not wins) else t
            return _coalesce(out, t, self.value)
        if f == "first_non_null_value":
            out = self.value if (t is None or not wins) else t
            return _coalesce(out, t, self.value)
        if f == "product":
            # retracts divide: the batch's product of adds, then its product of retracts
            out = _coalesce(t, self.value)
            if t is not None and self.value is not None:
                out = t * self.value
            if self.divisor is not None:
                out = _divide(1 if out is None else out, self.divisor)
            return out
        s = self.value
        if s is None or t is None:
            return _coalesce(t, s)
        if f == "sum":
            return t + s
        if f == "max":
            return max(t, s)
        if f == "min":
            return min(t, s)
        if f == "bool_and":
            return t and s
        if f == "bool_or":
            return t or s
        raise SpecError(f"unknown aggregate function {f}")


def _divide(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q  # Java: truncate toward zero
    return a / b


def _coalesce(*values: Any) -> Any:
    for v in values:
        if v is not None:
            return v
    return None


def _remove_first(items: list, removed: list) -> list:
    """``items`` without one occurrence (the first) per element of ``removed``."""
    pending, out = list(removed), []
    for x in items:
        if x in pending:
            pending.remove(x)
        else:
            out.append(x)
    return out


def _distinct(items: list) -> list:
    out: list = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def _blank(text: str) -> bool:
    """Paimon's ``StringUtils.isBlank``: empty, or only characters Java's
    ``Character.isWhitespace`` accepts (Unicode space separators except the no-break ones,
    and the ASCII controls TAB, LF, VT, FF, CR and 0x1C-0x1F)."""
    return all(
        c in "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
        or (unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in "\xa0\u2007\u202f")
        for c in text
    )


def _distinct_tokens(text: str, delimiter: str) -> str:
    """listagg ``distinct``: the delimiter-split tokens, blank ones skipped (Paimon 2.0), first
    occurrences kept."""
    return delimiter.join(_distinct([t for t in text.split(delimiter) if not _blank(t)]))


def _fold_column(spec: Spec, agg: Agg, column: str, recs: list[Rec]) -> _Fold | None:
    """Fold one column over records in order; None when no record owns the column."""
    fold = _Fold(agg)
    seen = False
    for r in recs:
        if column not in r.values:
            continue
        seen = True
        if r.retract:
            if agg.ignore_retract:
                continue
            if agg.function not in RETRACTABLE:
                raise SpecError(f"{agg.function} on {column} refuses retracts")
            fold.retract(r.values[column])
        else:
            fold.add(r.values[column])
    return fold if seen else None


# ---------------------------------------------------------------------------------------------
# engines: fold one key's records (in order) to a state; merge a state into the stored row


def _empty_row(spec: Spec, key: tuple) -> dict[str, Any]:
    row = {c: None for c in spec.stored}
    row.update(zip(spec.key, key))
    return row


class _PartialUpdate:
    """partial_update without sequence groups (plain, ignore_delete, remove_record_on_delete)."""

    @staticmethod
    def fold(spec: Spec, recs: list[Rec]) -> dict:
        if spec.row_kind_column and spec.ignore_delete:
            recs = [r for r in recs if not r.retract]
        state = "normal"
        if spec.row_kind_column and spec.remove_record_on_delete:
            recs = [r for r in recs if r.kind != "-U"]
            deletes = [i for i, r in enumerate(recs) if r.kind == "-D"]
            if deletes:
                last = deletes[-1]
                delete_seq = _seq(spec, recs[last])
                recs = recs[last + 1 :]
                if not recs:
                    return {"state": "deleted", "seq": delete_seq}
                state = "after_delete"
        if not recs:
            return {"state": "empty"}
        values: dict[str, Any] = {}
        for r in recs:
            for c, v in r.values.items():
                if c in spec.key or c in spec.sequence or c == spec.row_kind_column:
                    continue
                if v is not None or c not in values:
                    values[c] = v
        return {"state": state, "values": values, "seq": _seq(spec, recs[-1])}

    @staticmethod
    def merge(spec: Spec, key: tuple, stored: dict | None, folded: dict) -> dict | None:
        state = folded["state"]
        if state == "empty":
            return stored
        if stored is None:
            if state == "deleted":
                return None
            row = _empty_row(spec, key)
            row.update(folded["values"])
            row.update(zip(spec.sequence, folded["seq"]))
            return row
        stored_seq = tuple(stored[c] for c in spec.sequence)
        wins = _wins(spec, folded["seq"], stored_seq)
        if state == "deleted":
            return None if wins else stored
        if state == "after_delete" and wins:
            row = _empty_row(spec, key)
            row.update(folded["values"])
            row.update(zip(spec.sequence, folded["seq"]))
            return row
        row = dict(stored)
        for c, v in folded["values"].items():
            if v is not None and (row[c] is None or wins):
                row[c] = v
        if wins:
            row.update(zip(spec.sequence, folded["seq"]))
        return row


def _last_removal(spec: Spec, recs: list[Rec]) -> tuple[int | None, list | None]:
    """remove_record_on_sequence_group: the index of the last -D (in place order) whose group
    sequence is >= every group sequence of its removing group before it, and that record's
    sequences of the removing groups as ``[(sequence fields, values)]``; (None, None) without
    one."""
    if not spec.row_kind_column or spec.ignore_delete:
        return None, None
    removing = [
        seqs for name, seqs, _ in spec.group_list() if name in spec.remove_record_on_sequence_group
    ]
    greatest: dict[int, tuple] = {}
    cut = None
    for i, r in enumerate(recs):
        for g, seqs in enumerate(removing):
            values = tuple(r.values.get(s) for s in seqs)
            if all(v is None for v in values):
                continue
            before = greatest.get(g)
            if r.kind == "-D" and (before is None or seq_key(values) >= seq_key(before)):
                cut = i
            if before is None or seq_key(values) > seq_key(before):
                greatest[g] = values
    if cut is None:
        return None, None
    return cut, [(seqs, tuple(recs[cut].values.get(s) for s in seqs)) for seqs in removing]


class _PartialUpdateGroups:
    """partial_update with sequence groups (and aggregates inside groups)."""

    @staticmethod
    def fold(spec: Spec, recs: list[Rec]) -> dict:
        if spec.row_kind_column and spec.ignore_delete:
            recs = [r for r in recs if not r.retract]
        if not recs:
            return {"state": "empty"}
        folded = _PartialUpdateGroups.fold_part(spec, recs)
        cut, cut_seqs = _last_removal(spec, recs)
        if cut is not None:  # the row is removed there: only the records after it count
            folded["after"] = _PartialUpdateGroups.fold_part(spec, recs[cut + 1 :])
        folded["cut"] = cut_seqs  # None: no removing delete
        folded["live"] = len(recs) - (0 if cut is None else cut + 1)
        return folded

    @staticmethod
    def fold_part(spec: Spec, recs: list[Rec]) -> dict:
        grouped = {c for _, seqs, cols in spec.group_list() for c in seqs + cols}
        adds = [r for r in recs if not r.retract]
        values: dict[str, Any] = {}
        for r in adds:
            for c, v in r.values.items():
                if c in spec.key or c in spec.sequence or c == spec.row_kind_column or c in grouped:
                    continue
                if v is not None or c not in values:
                    values[c] = v
        groups = {}
        for name, seqs, cols in spec.group_list():
            part = [r for r in recs if any(r.values.get(s) is not None for s in seqs)]
            if not part:
                continue
            part.sort(
                key=lambda r: (seq_key(tuple(r.values.get(s) for s in seqs)), r.source, r.arrival)
            )
            last = part[-1]
            plain = {}
            aggs = {}
            for c in cols:
                if c in spec.aggregates or spec.default_aggregate:
                    aggs[c] = _fold_column(spec, spec.agg(c), c, part)
                else:
                    plain[c] = None if last.retract else last.values.get(c)
            groups[name] = {
                "seq": tuple(last.values.get(s) for s in seqs),
                "delete": last.kind == "-D",
                "plain": plain,
                "aggs": aggs,
            }
        return {
            "state": "normal",
            "values": values,
            "seq": _seq(spec, adds[-1]) if adds else None,
            "groups": groups,
        }

    @staticmethod
    def merge(spec: Spec, key: tuple, stored: dict | None, folded: dict) -> dict | None:
        if folded["state"] == "empty":
            return stored
        cut = folded.get("cut")
        if cut is not None:
            wins = stored is None or any(
                any(v is not None for v in seqs)
                and seq_key(seqs) >= seq_key(tuple(stored[s] for s in name_seqs))
                for name_seqs, seqs in cut
            )
            if wins:  # the row is removed; the records after the delete make a new one
                if not folded["live"]:
                    return None
                stored, folded = None, folded["after"]
        row = dict(stored) if stored is not None else _empty_row(spec, key)
        new = stored is None
        wins = True
        if folded["seq"] is not None and not new:
            wins = _wins(spec, folded["seq"], tuple(row[c] for c in spec.sequence))
        for c, v in folded["values"].items():
            if v is not None and (row[c] is None or wins):
                row[c] = v
        if folded["seq"] is not None and wins:
            row.update(zip(spec.sequence, folded["seq"]))
        for name, seqs, _cols in spec.group_list():
            g = folded["groups"].get(name)
            if g is None:
                continue
            group_wins = seq_key(g["seq"]) >= seq_key(tuple(row[s] for s in seqs))
            if group_wins and g["delete"] and name in spec.remove_record_on_sequence_group:
                return None
            for c, fold in g["aggs"].items():
                if fold is not None:
                    row[c] = fold.merge(row[c], group_wins)
            if group_wins:
                row.update(g["plain"])
                row.update(zip(seqs, g["seq"]))
        return row


class _Aggregation:
    @staticmethod
    def fold(spec: Spec, recs: list[Rec]) -> dict:
        if spec.row_kind_column and spec.ignore_delete:
            recs = [r for r in recs if not r.retract]
        if not recs:
            return {"state": "empty"}
        folds = {}
        for c in spec.stored:
            if c in spec.key or c in spec.sequence:
                continue
            fold = _fold_column(spec, spec.agg(c), c, recs)
            if fold is not None:
                folds[c] = fold
        return {"state": "normal", "folds": folds, "seq": _seq(spec, recs[-1])}

    @staticmethod
    def merge(spec: Spec, key: tuple, stored: dict | None, folded: dict) -> dict | None:
        if folded["state"] == "empty":
            return stored
        row = dict(stored) if stored is not None else _empty_row(spec, key)
        wins = stored is None or _wins(spec, folded["seq"], tuple(row[c] for c in spec.sequence))
        for c, fold in folded["folds"].items():
            row[c] = fold.merge(row[c], wins)
        if wins:
            row.update(zip(spec.sequence, folded["seq"]))
        return row


class _Deduplicate:
    @staticmethod
    def fold(spec: Spec, recs: list[Rec]) -> dict:
        if spec.row_kind_column and spec.ignore_delete:
            recs = [r for r in recs if not r.retract]
        if not recs:
            return {"state": "empty"}
        last = recs[-1]
        return {"state": "deleted" if last.retract else "row", "rec": last, "seq": _seq(spec, last)}

    @staticmethod
    def merge(spec: Spec, key: tuple, stored: dict | None, folded: dict) -> dict | None:
        if folded["state"] == "empty":
            return stored
        if stored is not None and not _wins(
            spec, folded["seq"], tuple(stored[c] for c in spec.sequence)
        ):
            return stored
        if folded["state"] == "deleted":
            return None
        row = _empty_row(spec, key)
        row.update({c: v for c, v in folded["rec"].values.items() if c in row})
        return row


class _FirstRow:
    @staticmethod
    def fold(spec: Spec, recs: list[Rec]) -> dict:
        recs = [r for r in recs if not r.retract]
        if not recs:
            return {"state": "empty"}
        return {"state": "row", "rec": recs[0]}

    @staticmethod
    def merge(spec: Spec, key: tuple, stored: dict | None, folded: dict) -> dict | None:
        if folded["state"] == "empty" or stored is not None:
            return stored
        row = _empty_row(spec, key)
        row.update({c: v for c, v in folded["rec"].values.items() if c in row})
        return row


def _engine(spec: Spec):
    if spec.engine == "partial_update":
        return _PartialUpdateGroups if spec.groups else _PartialUpdate
    return {"aggregation": _Aggregation, "deduplicate": _Deduplicate, "first_row": _FirstRow}[
        spec.engine
    ]


def _apply(spec: Spec, table: Table, recs: list[Rec]) -> None:
    """Fold ``recs`` (one unit: a bootstrap batch or one source's part of a batch) and merge."""
    engine = _engine(spec)
    by_key: dict[tuple, list[Rec]] = {}
    for r in _ordered(spec, recs):
        by_key.setdefault(_key(spec, r), []).append(r)
    for key, part in by_key.items():
        row = engine.merge(spec, key, table.get(key), engine.fold(spec, part))
        if row is None:
            table.pop(key, None)
        else:
            table[key] = row


# ---------------------------------------------------------------------------------------------
# public API


def bootstrap(spec: Spec, records: list[tuple[int, Record]]) -> Table:
    """All records (all sources, in arrival order) folded at once into an empty table."""
    spec.validate()
    table: Table = {}
    _apply(spec, table, _records(spec, records))
    return table


def incremental(spec: Spec, batches: list[list[tuple[int, Record]]]) -> Table:
    """The first batch bootstraps; every later batch merges source by source, in branch order.

    Arrival numbers restart in every batch (a record's position within its source's batch).
    """
    spec.validate()
    table: Table = {}
    for i, batch in enumerate(batches):
        recs = _records(spec, batch)
        if i == 0:
            _apply(spec, table, recs)
            continue
        for source in sorted({r.source for r in recs}):
            _apply(spec, table, [r for r in recs if r.source == source])
    return table


def _sort_value(v: Any) -> Any:
    if isinstance(v, dict):
        return sorted(v.items())
    if isinstance(v, float) and math.isnan(v):
        return (1,)
    return v


def as_rows(table: Table, columns: list[str]) -> list[tuple]:
    """The table as tuples over ``columns``, sorted with NULL first."""
    rows = [tuple(row.get(c) for c in columns) for row in table.values()]
    return sorted(rows, key=lambda r: tuple((v is not None, _sort_value(v)) for v in r))

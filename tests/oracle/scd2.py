"""A plain-Python reference of snapshot models (dbt snapshots) and temporal joins, written from
docs/concepts/temporal-joins.md only; it shares no code with lakewide.

A history is ``{key: [Version]}``; each run hands the oracle the input rows it reads (every row
of the input on a full read, the appended rows on an append read) and the run's time ``now``
(any value that sorts after every data timestamp: the tests use ``RunTime(n)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import total_ordering
from typing import Any


@total_ordering
@dataclass(frozen=True)
class RunTime:
    """The time of run ``n``: later than any data timestamp, ordered by ``n``."""

    n: int

    def __lt__(self, other: object) -> bool:
        if isinstance(other, RunTime):
            return self.n < other.n
        return False  # a data timestamp is never later than a run's time


@dataclass
class Version:
    values: dict[str, Any]
    start: Any
    end: Any = None
    deleted: bool = False
    closed_by_delete: Any = None  # invalidate: the time a hard delete closed it


@dataclass
class Scd2:
    """The history kept by one snapshot model."""

    key: str
    strategy: str  # timestamp | check
    updated_at: str | None
    check_cols: list[str] = field(default_factory=list)
    hard_deletes: str = "ignore"
    history: dict[Any, list[Version]] = field(default_factory=dict)

    def run(self, rows: list[dict[str, Any]], now: Any, *, full: bool) -> None:
        """One run over the input rows it reads."""
        starts = [row[self.updated_at] if self.updated_at else now for row in rows]
        ordered = sorted(zip(starts, rows), key=lambda pair: pair[0])
        newest = {row[self.key]: start for start, row in ordered}
        deleted_at = {key: self._deleted_at(versions) for key, versions in self.history.items()}
        for start, row in ordered:
            key = row[self.key]
            gone = deleted_at.get(key)
            if gone is not None and start == newest[key] and start <= gone:
                start = now  # back after a hard delete: from the run that sees it again
            self._add(row, start)
        if full and self.hard_deletes != "ignore":
            present = {row[self.key] for row in rows}
            for key, versions in self.history.items():
                last = max(versions, key=lambda v: v.start)
                if key in present or last.deleted or last.end is not None:
                    continue
                if self.hard_deletes == "invalidate":
                    last.closed_by_delete = now
                else:
                    versions.append(Version(dict(last.values), now, deleted=True))
        for versions in self.history.values():
            self._ends(versions)

    @staticmethod
    def _deleted_at(versions: list[Version]) -> Any:
        """When a hard delete ended the key's newest version (None: it is live)."""
        last = max(versions, key=lambda v: v.start)
        return last.start if last.deleted else last.closed_by_delete

    def _add(self, row: dict[str, Any], start: Any) -> None:
        versions = self.history.setdefault(row[self.key], [])
        if any(v.start == start for v in versions):
            return  # the same version read again
        before = [v for v in versions if v.start < start]
        if self.strategy == "check" and before:
            prev = max(before, key=lambda v: v.start)
            same = all(prev.values[c] == row[c] for c in self.check_cols)
            if same and not prev.deleted and prev.closed_by_delete is None:
                return
        versions.append(Version(dict(row), start))

    def _ends(self, versions: list[Version]) -> None:
        versions.sort(key=lambda v: v.start)
        for version, following in zip(versions, [*versions[1:], None]):
            nxt = following.start if following is not None else None
            ends = [t for t in (nxt, version.closed_by_delete) if t is not None]
            version.end = min(ends) if ends else None

    def rows(self) -> list[tuple[Any, ...]]:
        """``(values..., valid_from, valid_to, is_deleted)`` per version, sorted."""
        out = []
        for versions in self.history.values():
            for v in versions:
                out.append((*v.values.values(), v.start, v.end, v.deleted))
        return sorted(out, key=repr)

    def valid_at(self, key: Any, at: Any) -> dict[str, Any] | None:
        """The version of ``key`` valid at time ``at`` (a temporal join), or None."""
        for v in self.history.get(key, []):
            if v.start <= at and (v.end is None or at < v.end):
                return None if v.deleted else v.values  # deleted: the key did not exist
        return None

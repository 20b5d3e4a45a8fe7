"""What one run of a model did (its result) and, for a table or key table, per source branch
what it read (reported in ``target/run_results.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SourceRange:
    """What one source branch read in one run."""

    branch: int
    relation: str
    start: int | None
    end: int | None
    mode: str  # none | incremental | changelog | positions | full (lakewide.run.models.read_modes)
    keys: int = 0
    reason: str = ""


@dataclass
class KeyTableOutcome:
    plan: str
    ranges: list[SourceRange] = field(default_factory=list)
    commits: list[int] = field(default_factory=list)
    rejected: int = 0
    statements: int = 0
    schema: list[str] = field(default_factory=list)  # the schema changes applied
    refresh: str = (
        ""  # why the run read the changes or re-folded (lakewide.run.models.refresh_choice)
    )
    restated: int | None = None  # run --restate: keys replaced or inserted
    removed: int = 0  # run --restate: keys deleted (the fold gives them no row any more)


@dataclass
class ModelResult:
    """What happened to one model in one run."""

    name: str
    status: str  # success | error | skipped
    plan: str = ""  # bootstrap | full-refresh | incremental | refold | restate | view | table
    statements: int = 0
    rows: int | None = None
    seconds: float = 0.0
    message: str = ""
    rejected: int = 0  # rows dropped for a NULL primary key
    rows_read: int = 0  # keys staged from new source rows
    ranges: list[dict[str, Any]] = field(default_factory=list)
    commits: list[int] = field(default_factory=list)
    refresh: str = ""  # incremental runs: why they read the changes or re-folded
    restated: int | None = None  # run --restate: keys replaced or inserted
    removed: int | None = None  # run --restate: keys deleted

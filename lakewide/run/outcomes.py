"""What one run of a table or key table did: per source branch what it read, and its commits
(reported in ``target/run_results.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SourceRange:
    """What one source branch read in one run."""

    branch: int
    relation: str
    start: int | None
    end: int | None
    mode: str  # none | incremental | changelog | positions | full (lakewide.run.read_modes)
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
    refresh: str = ""  # why the run read the changes or re-folded (lakewide.run.refresh_choice)
    restated: int | None = None  # run --restate: keys replaced or inserted
    removed: int = 0  # run --restate: keys deleted (the fold gives them no row any more)

"""The incremental step of one source branch of a compiled key table (its batch and MERGE)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp


@dataclass
class SourceMerge:
    """The incremental step of one source branch: stage its batch, then MERGE it."""

    branch: int
    name: str
    batch_view: str
    batch: exp.Select
    statement: exp.Merge
    null_keys: exp.Select | None = None
    bounds: exp.Select | None = None  # merge_filter: the batch's key range, read after staging

    def staging(self, *, copy: bool = True) -> exp.Create:
        """The batch as a temporary view (what the engine materializes before the MERGE).

        ``copy=False`` moves the batch itself into the view (for a caller dropping this object).
        """
        view = exp.Create(
            this=exp.table_(self.batch_view),
            kind="VIEW",
            replace=True,
            expression=self.batch.copy() if copy else self.batch,
        )
        view.set("properties", exp.Properties(expressions=[exp.TemporaryProperty()]))
        return view

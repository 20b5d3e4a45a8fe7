"""Execute compiled plan steps on the Spark adapter: bind parameters, run, keep results."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lakewide.compiler.plans import steps as p
from lakewide.compiler.trees import placeholders
from lakewide.project.nodes import Relation
from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.file_nulls import FileNulls
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary import events, faults
from lakewide.vocabulary.errors import ModelRunError

#: commits a statement (bound) for a Commit step; returns the new snapshot, None when none
Committer = Callable[[p.Commit, exp.Expression, placeholders.Params], "int | None"]


class StepRunner:
    """Runs the steps of one model's plans; ``metas``: upstream snapshots already read."""

    def __init__(
        self,
        adapter: SparkAdapter,
        plans: p.ModelPlans,
        metas: dict[str, TableMeta | None],
        commit: Committer,
    ) -> None:
        self.adapter, self.tables, self.metas = adapter, plans.tables, metas
        self._commit = commit
        # the views registered by a read in commit order: their files' NULL counts
        self.files: dict[str, FileNulls] = {}

    def run(self, steps: list[p.Step], params: placeholders.Params) -> placeholders.Params:
        """Run ``steps`` in order; results are added to ``params`` (returned)."""
        for step in steps:
            if step.when is not None and not params.get(step.when):
                continue
            self._step(step, params)
        return params

    def pin(self, reads: list[p.Read], params: placeholders.Params, ordered: bool) -> None:
        """Register the pinned views ``reads``; ``ordered``: in commit order (a fold numbers
        their rows by arrival), else one plain read at the snapshot each (no file planned:
        the views are only analysed, or joined as lookups)."""
        for read in reads:
            self._read(read, params, ordered)

    def _step(self, step: p.Step, params: placeholders.Params) -> None:
        adapter = self.adapter
        if isinstance(step, p.Read):
            self._read(step, params)
        elif isinstance(step, p.Sequence):
            params[step.into] = adapter.sequence_number(self.tables[step.table], params[step.of])
        elif isinstance(step, p.Query):
            if step.nulls is not None and self._no_nulls(step.nulls):
                params.update(dict.fromkeys(step.into, 0))
                return
            _, rows = adapter.rows(placeholders.bind(step.query, params))
            params.update(zip(step.into, rows[0]))
        elif isinstance(step, p.Stage):
            if step.checkpoint:
                faults.checkpoint(step.checkpoint)
            self.files.pop(step.view, None)
            params[step.into] = adapter.stage(step.view, placeholders.bind(step.query, params))
        elif isinstance(step, p.Refuse):
            count = params.get(step.result) or 0
            if count:
                raise ModelRunError(step.message.format(**{**params, "count": count}))
        elif isinstance(step, p.CheckTypes):
            step.check(adapter.column_types(placeholders.bind(step.probe, params)))
        elif isinstance(step, p.Commit):
            self._commit_step(step, params)
        else:
            if isinstance(step.statement, exp.Create):  # a view of the same name replaced
                self.files.pop(step.statement.this.name, None)
            adapter.sql(placeholders.bind(step.statement, params))

    def _no_nulls(self, columns: tuple[tuple[str, str], ...]) -> bool:
        """Whether the files of the views' reads count no NULL in any of ``columns``."""
        if not all(view in self.files for view, _ in columns):
            return False
        if all(self.files[view].none_null(column) for view, column in columns):
            events.emit("NullKeys", "no NULL key: the files' statistics say so", "debug")
            return True
        return False

    def _read(self, step: p.Read, params: placeholders.Params, ordered: bool = True) -> None:
        if step.checkpoint:
            faults.checkpoint(step.checkpoint)
        relation: Relation = self.tables[step.table]
        at = params.get(step.at) if step.at else None
        self.files.pop(step.view, None)
        if step.kind == "changes":
            assert step.after is not None and at is not None, "a changes read is bounded"
            self.adapter.register_changelog(
                step.view,
                relation,
                params[step.after],
                at,
                self.metas.get(step.table),
                retracts=step.retracts,
            )
        elif step.kind == "no_changes":
            self.adapter.register_no_changes(step.view, relation, at)
        elif step.kind == "version":  # one plain read: row order does not matter
            self.adapter.register_read(step.view, relation, at, ordered=False, current_columns=True)
        else:
            after: int | None = None
            if step.kind == "appends":
                assert step.after is not None, "an appends read names its start"
                after = params[step.after]
            files = self.adapter.register_read(
                step.view,
                relation,
                at,
                after,
                meta=self.metas.get(step.table),
                empty=step.kind == "empty",
                ordered=ordered,
                stats=step.stats,
            )
            if files is not None:
                self.files[step.view] = files

    def _commit_step(self, step: p.Commit, params: placeholders.Params) -> None:
        statement = step.statement
        if step.narrowed is not None and step.bounds is not None:
            _, [(low, high)] = self.adapter.rows(placeholders.bind(step.bounds, params))
            if placeholders.exact_literal(low) and placeholders.exact_literal(high):
                statement = step.narrowed
                params.update(low=low, high=high)
        self._commit(step, placeholders.bind(statement, params), params)

"""Iceberg branches of model tables: written and read by name, made, fast-forwarded, dropped.

What a run on a branch reads is decided in lakewide.state.branches; here every statement of a
run on branch ``NAME`` names the branch of each table that has it (``<table>.branch_NAME``,
Iceberg's branch identifier), so its writes go to the branch and its reads of a table's
current state read the branch's head. A read pinned to a snapshot (``VERSION AS OF``, the
``snapshot-id`` and ``start-snapshot-id`` read options, changelog scans) names the table
alone: a snapshot id is the same in every line of a table. Iceberg's session setting
``spark.wap.branch`` is not used: it also applies to every read of a table with
``write.wap.enabled``, where Iceberg refuses a snapshot pinned next to it ("Cannot override
ref, already set snapshot id"), so a model reading an upstream on the branch at a snapshot,
or its own table before and after a MERGE for its changelog, failed. The refs themselves
change through ``ALTER TABLE ... CREATE BRANCH`` (zero-copy, at main's head),
``system.fast_forward`` and ``DROP BRANCH``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from lakewide.project.branch_name import MAIN
from lakewide.project.nodes import Relation
from lakewide.spark.procedures import call
from lakewide.spark.table_metadata import MetadataReads
from lakewide.state.branches import branch_state
from lakewide.state.contract_store import ContractStore
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import ModelRunError, UsageError

#: the statements whose tables are read or written on the branch (DDL changes the whole table)
_ON_BRANCH = (exp.Query, exp.Insert, exp.Merge, exp.Delete, exp.Update)


def branch_table(table: exp.Table, branch: str) -> exp.Table:
    """``table`` (catalog.namespace.name) as Iceberg's identifier of its branch ``branch``:
    ``catalog.namespace.name.branch_<branch>`` (its alias kept)."""
    named = table.copy()
    suffix = exp.to_identifier(f"branch_{branch}")
    named.set("this", exp.Dot(this=named.this, expression=suffix))
    return named


def _read_or_written(statement: exp.Expression) -> exp.Expr | None:
    """The part of ``statement`` whose tables are read or written at their current state: a
    query or DML statement whole, the query of a ``CREATE [TEMPORARY] VIEW|TABLE ... AS``
    (not what it creates); None for DDL (it changes the whole table, every branch)."""
    if isinstance(statement, _ON_BRANCH):
        return statement
    if isinstance(statement, exp.Create) and isinstance(statement.expression, exp.Query):
        return statement.expression
    return None


def _alter(relation: Relation, *words: str | exp.Expression) -> exp.Command:
    """``ALTER TABLE <relation> <words>``: sqlglot has no node for Iceberg's branch clauses,
    so the words are keywords and trees (identifiers, numbers) rendered by sqlglot."""
    parts = ["TABLE", relation.table(), *words]
    text = " ".join(p if isinstance(p, str) else to_sql(p, pretty=False) for p in parts)
    return exp.Command(this="ALTER", expression=exp.Literal.string(text))


class BranchWrites(MetadataReads):
    """Statements on the output's branch, and changes to the branches of a model's table."""

    def sql(self, statement: exp.Expression) -> Any:
        """Run one statement; on a run on a branch, each table it reads or writes at its
        current state is named on its line (the output's branch, or the model's staging side
        branch) where the table has it (see the module)."""
        scope = None if self.output.branch is None else _read_or_written(statement)
        if scope is None or not any(self._line_of(t) for t in scope.find_all(exp.Table)):
            return super().sql(statement)
        statement = statement.copy()
        scope = _read_or_written(statement)
        assert scope is not None
        for table in list(scope.find_all(exp.Table)):
            line = self._line_of(table)
            if line is not None:
                table.replace(branch_table(table, line))
        return super().sql(statement)

    def _line_of(self, table: exp.Table) -> str | None:
        """The branch ``table`` is named on when it names, at its current state, a table that
        has the output's branch (not a session view, a metadata table, a branch already, or a
        pinned snapshot); else None."""
        if table.args.get("version") or not table.catalog or not table.db:
            return None
        if not isinstance(table.this, exp.Identifier):
            return None
        relation = Relation(table.catalog, table.db, table.name)
        return self.line(relation) if self.has_branch(relation) else None

    def has_branch(self, relation: Relation) -> bool:
        """Whether ``relation`` has the output's branch (known once per table and run: only
        ``ensure_branch`` and ``drop_branch`` change it)."""
        branch = self.output.branch
        if branch is None:
            return False
        if relation in self.lines:
            return True  # staged: on its side branch, made from the output's branch
        known = self.branched.get(relation)
        if known is None:
            reader = self._reader(relation)
            if reader is not None:
                meta = reader.table_meta(relation)
                known = meta is not None and branch in meta.branches
            else:
                known = branch in self._refs(relation)
            self.branched[relation] = known
        return known

    def _refs(self, relation: Relation) -> set[str]:
        """The names of ``relation``'s refs through Iceberg's Java API (none: no such table)."""
        if not self.table_exists(relation):
            return set()
        return {str(name) for name in self._iceberg_table(relation).refs().keySet()}

    def current_name(self, relation: Relation) -> str:
        """The name reading ``relation``'s current state on this run's line: its branch's
        identifier where it has the output's branch, else its own."""
        if self.output.branch is not None and self.has_branch(relation):
            return f"{relation}.branch_{self.line(relation)}"
        return str(relation)

    def ensure_branch(self, relation: Relation, model: str) -> None:
        """Give ``relation`` the output's branch: made at
        main's head when missing; moved to main's head when it is behind main (all it holds
        was published, and production ran on since). A table that does not exist on main yet,
        or has no snapshot, is refused (UsageError): a branch starts at one of main's
        snapshots, and making the table on main would change production. A branch made or
        moved to main's head reads main's contract: the contract keys of the branch are
        emptied (lakewide.state.contract_store)."""
        branch = self.output.branch
        assert branch is not None, "only runs on a branch make branches"
        self.forget(relation)
        meta = self.table_meta(relation)
        if meta is None or meta.current is None:
            raise UsageError(
                f"model {model}: table {relation} has no snapshot on main yet, so it has no "
                f"branch {branch} to write; build it on main first (`lakewide run -s {model}` "
                "without --branch), then on the branch"
            )
        state = branch_state(meta, branch)
        if state.head is None:
            name, at = exp.to_identifier(branch), exp.Literal.number(state.main)
            self.sql(_alter(relation, "CREATE BRANCH", name, "AS OF VERSION", at))
            ContractStore(self).clear(relation, branch)
        elif state.behind:
            self._fast_forward(relation, branch, MAIN)
            ContractStore(self).clear(relation, branch)
        self.branched[relation] = True
        self.refresh(relation)

    def place_branch(self, relation: Relation, branch: str, snapshot: int) -> None:
        """Point ``branch`` of ``relation`` at ``snapshot``, made when missing (``ALTER TABLE
        ... CREATE OR REPLACE BRANCH ... AS OF VERSION``: a ref change, no data copied)."""
        name, at = exp.to_identifier(branch), exp.Literal.number(snapshot)
        self.sql(_alter(relation, "CREATE OR REPLACE BRANCH", name, "AS OF VERSION", at))
        self.refresh(relation)

    def fast_forward(self, relation: Relation, branch: str) -> None:
        """Move ``relation``'s main to the head of ``branch`` (main must be its ancestor)."""
        self._fast_forward(relation, MAIN, branch)

    def _fast_forward(self, relation: Relation, branch: str, to: str) -> None:
        """``system.fast_forward``: ``branch`` of ``relation`` moved to the head of ``to``."""
        arguments: dict[str, exp.Expression] = {
            "table": exp.Literal.string(f"{relation.namespace}.{relation.name}"),
            "branch": exp.Literal.string(branch),
            "to": exp.Literal.string(to),
        }
        try:
            self.sql(call(relation.catalog, "fast_forward", arguments))
        except ModelRunError as err:
            raise ModelRunError(
                f"could not fast-forward {branch} of {relation} to {to}: {err.message}"
            ) from err
        self.refresh(relation)

    def drop_branch(self, relation: Relation, branch: str) -> None:
        """Drop ``branch`` of ``relation`` (its snapshots go with the next expiry)."""
        self.sql(_alter(relation, "DROP BRANCH IF EXISTS", exp.to_identifier(branch)))
        self.branched.pop(relation, None)
        self.refresh(relation)

"""Iceberg branches of model tables: made for a run on a branch, fast-forwarded, dropped.

What a run on a branch reads is decided in lakewide.state.branches; this is what changes the
tables' refs: ``ALTER TABLE ... CREATE BRANCH`` (zero-copy, at main's head), the table
property ``write.wap.enabled`` (without it Iceberg sends a ``spark.wap.branch`` session's
writes to main), ``system.fast_forward`` and ``DROP BRANCH``.
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.dialect import to_sql
from lakewide.errors import ModelRunError, UsageError
from lakewide.project.branch_name import MAIN
from lakewide.project.nodes import Relation
from lakewide.spark.procedures import call
from lakewide.spark.table_metadata import MetadataReads
from lakewide.state.branches import branch_state

#: the table property that lets a session's ``spark.wap.branch`` choose the branch written
WAP_ENABLED = "write.wap.enabled"


def _alter(relation: Relation, *words: str | exp.Expression) -> exp.Command:
    """``ALTER TABLE <relation> <words>``: sqlglot has no node for Iceberg's branch clauses,
    so the words are keywords and trees (identifiers, numbers) rendered by sqlglot."""
    parts = ["TABLE", relation.table(), *words]
    text = " ".join(p if isinstance(p, str) else to_sql(p, pretty=False) for p in parts)
    return exp.Command(this="ALTER", expression=exp.Literal.string(text))


def _enable_wap(relation: Relation) -> exp.Alter:
    """``ALTER TABLE <relation> SET TBLPROPERTIES ('write.wap.enabled' = 'true')``."""
    enabled = exp.Property(this=exp.Literal.string(WAP_ENABLED), value=exp.Literal.string("true"))
    return exp.Alter(
        this=relation.table(),
        kind="TABLE",
        actions=[exp.AlterSet(expressions=[exp.Properties(expressions=[enabled])])],
    )


class BranchWrites(MetadataReads):
    """Changes to the branches of a model's table."""

    def ensure_branch(self, relation: Relation, model: str) -> None:
        """Give ``relation`` the output's branch and let it take the session's writes: made at
        main's head when missing; moved to main's head when it is behind main (all it holds
        was published, and production ran on since). A table that does not exist on main yet,
        or has no snapshot, is refused (UsageError): a branch starts at one of main's
        snapshots, and making the table on main would change production."""
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
        elif state.ahead == 0 and state.forwardable and state.head != state.main:
            self._fast_forward(relation, branch, MAIN)
        if self.table_property(relation, WAP_ENABLED) != "true":
            self.sql(_enable_wap(relation))
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
        self.refresh(relation)

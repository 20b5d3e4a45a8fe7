"""Rule: a key table's ``summary.md``, what ``lakewide compile`` writes for it by default: what
its next run does and how each source's columns merge, one line per column naming the sources
that own it (small enough to read in a pull request's diff, and growing with the columns only).
Every statement and plan is written with ``--all-plans``."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.model.wide_model import Branch, WideModel
from lakewide.compiler.plans.run_plan import PlanContext
from lakewide.compiler.statements.build_changes import changelog_relation
from lakewide.compiler.trees.rewrite import driving_table
from lakewide.vocabulary.dialect import DIALECT

NOT_OWNED = "-"


def _cell(text: str) -> str:
    """Text fit for one Markdown table cell: one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _one_line(tree: exp.Expr) -> str:
    return _cell(tree.sql(DIALECT))


def _order(columns: list[str]) -> str:
    return ", ".join(columns) if columns else "arrival order"


def merge_rule(model: WideModel, column: str) -> str:
    """How the fold per key sets ``column`` (the merge engine's semantics, in words)."""
    if column in model.primary_key:
        return "primary key"
    if column == model.row_kind:
        return "row kind (not stored)"
    group = model.group_of(column)
    if column in model.sequence:
        return "sequence field (largest)"
    if group is not None and column in group.sequence:
        return f"sequence of group {group.name} (largest)"
    if model.engine.picks_rows:
        which = "first" if model.engine.keeps_first else "last"
        return f"from the {which} row by {_order(model.sequence)}"
    if column in model.aggregated or model.group_aggregated(column):
        aggregate = model.aggregate(column)
        options = ", ".join(f"{k}={v}" for k, v in sorted(aggregate.options.items()))
        ordered = aggregate.name.startswith(("first", "last"))
        by = f" by {_order(model.sequence)}" if ordered else ""
        return f"{aggregate.name}({options})" + by if options else aggregate.name + by
    if group is not None:
        return f"group {group.name}: replaced with its group by {_order(group.sequence)}"
    return f"last non-null by {_order(model.sequence)}"


def _source(branch: Branch) -> str:
    """``1. name: table`` with what else the branch reads and filters."""
    select = branch.select
    driver = driving_table(select) or "(no table)"
    extra = [f"join {_one_line(j.this)}" for j in select.args.get("joins") or []]
    where = select.args.get("where")
    if where is not None:
        extra.append(_one_line(where))
    if select.args.get("with_") is not None or select.args.get("with") is not None:
        extra.append("with CTEs")
    more = f" ({'; '.join(extra)})" if extra else ""
    return f"{branch.index + 1}. {branch.name}: {driver}{more}"


def _owners(model: WideModel, column: str) -> str:
    """The sources that own ``column``, each with its expression where it is not the column
    itself (``every source`` when all do so): one cell, growing with the owners only."""
    owners = model.owners(column)
    if not owners:
        return NOT_OWNED
    plain = [
        isinstance(e, exp.Column) and e.name == column and not e.table
        for e in (b.owned[column] for b in owners)
    ]
    if len(owners) == len(model.branches) and all(plain):
        return "every source"
    return ", ".join(
        b.name if same else f"{b.name}: {_one_line(b.owned[column])}"
        for b, same in zip(owners, plain)
    )


def _next_run(model: WideModel, context: PlanContext, deltas: int) -> list[str]:
    sources = len(model.branches)
    lines = [
        f"* table missing (or `--full-refresh`): one CREATE TABLE AS folding the {sources} "
        "source(s) per key (`plans/bootstrap.sql`)",
        "* table present: each source's rows after its last consumed snapshot, folded per key "
        "and MERGEd into the columns it owns, with the offsets in the same commit "
        + (
            "(one source with new rows: `plans/incremental_NN_<source>_merge.sql`; several: "
            "one MERGE for all, `plans/incremental_all_merge.sql`)"
            if sources > 1
            else "(`plans/incremental_01_" + model.branches[0].name + "_merge.sql`)"
        ),
    ]
    if context.produces:
        changes = changelog_relation(model.node.relation)
        lines.append(f"* after each commit: the changed rows appended to `{changes}`")
    if deltas:
        lines.append(f"* {deltas} delta join(s): a changed dimension row folds its facts again")
    return lines


def summary(model: WideModel, context: PlanContext, deltas: int = 0) -> str:
    """The text of ``summary.md`` for a key table."""
    node = model.node
    head = [
        f"# {node.name}",
        "",
        f"{model.engine.name} table `{node.relation}`; primary key: "
        f"{', '.join(model.primary_key)}; sequence: {_order(model.sequence)}",
        "",
        "## Next run",
        "",
        *_next_run(model, context, deltas),
        "",
        "Every statement and plan, step by step: `lakewide compile --all-plans`.",
        "",
        "## Sources",
        "",
        *(_source(b) for b in model.branches),
        "",
        "## Columns",
        "",
        "| column | merge | sources (and their expression, where not the column itself) |",
        "|---|---|---|",
    ]
    rows = [
        f"| {column} | {merge_rule(model, column)} | {_owners(model, column)} |"
        for column in model.columns
    ]
    return "\n".join(head + rows) + "\n"

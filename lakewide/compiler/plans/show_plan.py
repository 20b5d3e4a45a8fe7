"""Rule: a model's run plans as ``lakewide compile`` writes them (``plans/*.sql``): each step's
SQL, engine operations that are not SQL (reads by snapshot id, sequence-number lookups) as
comments, and when a step runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from lakewide.compiler.plans import steps as p
from lakewide.compiler.plans.run_plan import temporary_view


def _shown(step: p.Step, to_sql: Callable[[exp.Expression], str]) -> str:
    """One step as ``compile`` writes it: its SQL, engine operations as comments."""
    when = f"-- only when :{step.when}\n" if step.when else ""
    if isinstance(step, p.Read):
        what = {
            "snapshot": "at :{at} (arrival order)",
            "version": "at :{at}",
            "appends": "rows appended after :{after} up to :{at}",
            "changes": "changelog after :{after} up to :{at} (Iceberg's create_changelog_view; "
            "by row position where delete files came in)",
            "empty": "no rows (its columns at :{at})",
            "no_changes": "no rows (the columns of its changelog at :{at})",
        }[step.kind]
        old = ""
        if step.retracts is not None:
            old = (
                "; old images read by position or marking: "
                + ", ".join(step.retracts)
                + " (others NULL)"
            )
        text = (
            f"-- read {step.view} := {step.table} "
            + what.format(at=step.at or "current", after=step.after)
            + old
            + "\n"
        )
    elif isinstance(step, p.Sequence):
        text = f"-- :{step.into} := sequence number of {step.table} snapshot :{step.of}\n"
    elif isinstance(step, p.Refuse):
        text = f"-- fail the model when :{step.result} > 0: {step.message}\n"
    elif isinstance(step, p.CheckTypes):
        text = (
            "-- type check (analysis only, no rows read): "
            + ", ".join(f"{c}: {f} takes {'/'.join(t)}" for c, (f, t) in step.functions.items())
            + "\n"
            + to_sql(step.probe)
        )
    elif isinstance(step, p.Query):
        text = to_sql(step.query) + f"-- into {', '.join(':' + i for i in step.into)}\n"
    elif isinstance(step, p.Stage):
        text = (
            to_sql(temporary_view(step.view, step.query))
            + f"-- staged (local checkpoint); its row count into :{step.into}\n"
        )
    elif isinstance(step, p.Commit):
        where = "changelog table" if step.changelog else "table, with the offsets"
        text = f"-- commit to the {where}\n" + to_sql(step.statement)
        if step.narrowed is not None and step.bounds is not None:
            text = (
                to_sql(step.bounds)
                + "-- into :low, :high (the staged key range)\n"
                + text
                + "-- or, when :low and :high are exact literals:\n"
                + to_sql(step.narrowed)
            )
    else:
        text = to_sql(step.statement)
    return when + text


def plan_text(steps: Sequence[p.Step], to_sql: Callable[[exp.Expression], str]) -> str:
    return "".join(_shown(step, to_sql) for step in steps)


def plan_files(plans: p.ModelPlans, to_sql: Callable[[exp.Expression], str]) -> dict[str, str]:
    """File name -> text of every plan (``target/compiled/<model>/plans/``)."""
    pins = plan_text(list(plans.pins) + list(plans.checks), to_sql)
    out = {
        "plans/bootstrap.sql": pins + plan_text(plans.bootstrap, to_sql),
        "plans/full_refresh.sql": pins + plan_text(plans.full_refresh, to_sql),
    }
    for branch in plans.branches:
        stem = f"plans/incremental_{branch.index + 1:02d}_{branch.name}"
        for mode, steps in branch.reads.items():
            out[f"{stem}_read_{mode}.sql"] = plan_text(steps, to_sql)
        out[f"{stem}_merge.sql"] = plan_text(branch.merge, to_sql)
        out[f"{stem}_merge_changelog.sql"] = (
            plan_text(branch.changelog, to_sql)
            if branch.changelog is not None
            else f"-- refused: {branch.changelog_refusal}\n"
        )
    for number, join in enumerate(plans.delta_joins, start=1):
        stem = f"plans/incremental_{join.branch + 1:02d}_delta_{number}_{join.name}"
        for mode, steps in join.reads.items():
            out[f"{stem}_read_{mode}.sql"] = plan_text(steps, to_sql)
        for which, steps in join.derived.items():
            out[f"{stem}_derive_{which}.sql"] = plan_text(steps, to_sql)
        out[f"{stem}_rederive.sql"] = plan_text(join.rederive, to_sql)
    if plans.combined is not None:
        out["plans/incremental_all_merge.sql"] = plan_text(plans.combined, to_sql)
    if plans.combined_changes is not None:
        out["plans/incremental_all_merge_changes.sql"] = plan_text(plans.combined_changes, to_sql)
    if plans.recover is not None:
        out["plans/changelog_recover.sql"] = plan_text(plans.recover, to_sql)
    if plans.refold:
        exact = "" if plans.refold_exact else "-- taken only with refresh_mode='full'\n"
        out["plans/refold.sql"] = exact + pins + plan_text(plans.refold, to_sql)
    return out

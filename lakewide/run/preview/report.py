"""``lakewide plan``'s outputs: JSON (a stable, documented schema), Markdown for a pull request
comment, and text for a terminal (docs/how-to/pull-requests.md shows the schema)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from lakewide import __version__
from lakewide.run.preview.run_preview import ModelPlan, Plan

#: bumped when a key of plan.json changes meaning or goes away (keys may be added)
PLAN_VERSION = 1


def summary(plan: Plan) -> dict[str, int]:
    """Counts: models per status, downstream models, breaking ones, refused ones."""
    counts = {s: sum(m.status == s for m in plan.models) for s in ("new", "changed", "unchanged")}
    return {
        **counts,
        "downstream": len(plan.downstream),
        "breaking": sum(d.breaking for d in plan.downstream),
        "refused": len(plan.refused),
    }


def plan_json(plan: Plan, state: str | None, target: dict[str, str]) -> dict[str, Any]:
    """The plan as plan.json holds it."""
    return {
        "plan_version": PLAN_VERSION,
        "lakewide_version": __version__,
        "state": state,
        "target": target,
        "summary": summary(plan),
        "refused": plan.refused,
        "models": [asdict(m) for m in plan.models],
        "downstream": [asdict(d) for d in plan.downstream],
    }


def _headline(plan: Plan) -> str:
    s = summary(plan)
    head = (
        f"{s['changed']} changed, {s['new']} new, {s['unchanged']} unchanged; "
        f"{s['downstream']} downstream ({s['breaking']} breaking)"
    )
    refused = f"refused: {', '.join(plan.refused)}" if plan.refused else "nothing refused"
    return f"{head}; {refused}"


def _status(model: ModelPlan) -> str:
    return f"{model.status} ({', '.join(model.modified)})" if model.modified else model.status


def _details(model: ModelPlan) -> list[str]:
    lines = [f"change: {c}" for c in model.changes]
    fix = f"; fix: {model.fix}" if model.fix else ""
    lines += [f"REFUSED: {r}{fix}" for r in model.refusals]
    lines += [f"column {c} removed" for c in model.removed]
    lines += [f"column {c} type {old} -> {new}" for c, (old, new) in model.retyped.items()]
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def plan_markdown(plan: Plan) -> str:
    """A summary a CI job can post on a pull request."""
    out = ["## lakewide plan", "", f"**{_headline(plan)}**", ""]
    touched = [m for m in plan.models if m.status != "unchanged"]
    if touched:
        out += ["| model | status | materialized | run | table |", "|---|---|---|---|---|"]
        for m in touched:
            run = f"**{m.action}**" if m.action == "refused" else m.action
            out.append(f"| {m.name} | {_status(m)} | {m.materialized} | {run} | `{m.table}` |")
        out.append("")
        for m in touched:
            details = _details(m)
            if details:
                out += [f"**{m.name}**", "", *(f"- {_cell(d)}" for d in details), ""]
    if plan.downstream:
        out += [
            "### Downstream",
            "",
            "| model | reads changed | breaking | why |",
            "|---|---|---|---|",
        ]
        for d in plan.downstream:
            why = _cell(", ".join(d.columns)) or "-"
            out.append(
                f"| {d.name} | {', '.join(d.via)} | {'yes' if d.breaking else 'no'} | {why} |"
            )
        out.append("")
    return "\n".join(out)


def plan_text(plan: Plan) -> str:
    """The plan for a terminal: a line per model that changed, its details indented."""
    out = []
    for m in plan.models:
        if m.status == "unchanged":
            continue
        out.append(f"{m.name}: {_status(m)}, {m.materialized} {m.relation}: {m.action}")
        out += [f"    {d}" for d in _details(m)]
    for d in plan.downstream:
        why = f": {', '.join(d.columns)}" if d.columns else ""
        kind = "BREAKING" if d.breaking else "not breaking"
        out.append(f"{d.name}: downstream of {', '.join(d.via)}, {kind}{why}")
    out.append(_headline(plan))
    return "\n".join(out)

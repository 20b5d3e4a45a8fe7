"""What ``lakewide run --watch`` refreshes at a poll, from the models' lags (lakewide.state.lag).

A model with a ``freshness`` target is **due** when it is not built, or when it lags and would
pass its target before the next poll (``lag + interval >= target``): changes that arrive well
within the target wait and are taken in together. A due model is refreshed together with the
models of the selection it reads from that lag themselves (Snowflake's ``TARGET_LAG =
DOWNSTREAM``: a model without a target is refreshed when a model with one needs it), in DAG
order; a model whose own upstream tables are unchanged is left out unless a model it reads
runs before it (it would have nothing to read).
"""

from __future__ import annotations

from dataclasses import dataclass

from lakewide.project.durations import describe
from lakewide.project.manifest import Manifest
from lakewide.state.lag import NOT_BUILT, UNKNOWN, ModelLag


@dataclass(frozen=True)
class DueModels:
    """The models one poll runs, in DAG order, each with why."""

    names: list[str]
    reasons: dict[str, str]


def is_due(lag: ModelLag, interval: float) -> bool:
    """Whether a model with a target must run now to stay within it (see the module doc)."""
    if lag.target is None or lag.state == UNKNOWN:
        return False
    if lag.state == NOT_BUILT:
        return True
    return bool(lag.lag) and (lag.lag or 0.0) + interval >= lag.target


def reason(lag: ModelLag) -> str:
    """Why a due model runs: ``lag 12s >= target 10s`` (its lag against its target)."""
    if lag.state == NOT_BUILT:
        return "not built yet"
    assert lag.target is not None and lag.lag is not None
    relation = "over" if lag.lag > lag.target else "near"
    return f"lag {describe(lag.lag)} {relation} target {describe(lag.target)}"


def plan_refresh(
    manifest: Manifest, selection: list[str], lags: dict[str, ModelLag], interval: float
) -> DueModels:
    """The models of ``selection`` (DAG order) to run now; ``lags``: every selected model's."""
    chosen = set(selection)
    due = {n for n in selection if is_due(lags[n], interval)}
    needed: dict[str, str] = {n: reason(lags[n]) for n in due}
    stack = list(due)
    while stack:  # the selected models they read, directly or through each other
        name = stack.pop()
        for ref in manifest.models[name].refs:
            if ref in chosen and ref not in needed:
                needed[ref] = f"upstream of {name}"
                stack.append(ref)
    names: list[str] = []
    for name in selection:
        if name not in needed:
            continue
        runs_before = any(r in names for r in manifest.models[name].refs)
        if lags[name].own or runs_before:
            names.append(name)
    return DueModels(names, {n: needed[n] for n in names})


def watched(manifest: Manifest, selection: list[str]) -> list[str]:
    """The selected models with a freshness target (``run --watch`` needs at least one)."""
    return [n for n in selection if manifest.models[n].config.freshness is not None]

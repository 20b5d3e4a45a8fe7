"""The model DAG: order, cycles and node selection.

Selectors: ``name``, ``tag:x``, ``path:models/x``, ``state:new``, ``state:modified`` (with
``.body`` or ``.configs``), each with the ``+`` graph operators (``+x`` adds its upstream models,
``x+`` its downstream ones); ``a,b`` selects the models both select (dbt's intersection).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lakewide.project.nodes import ModelNode
from lakewide.vocabulary.errors import ConfigError


def _find_cycle(models: dict[str, ModelNode], remaining: set[str]) -> list[str]:
    start = min(remaining)
    path: list[str] = []
    node = start
    while node not in path:
        path.append(node)
        node = min(r for r in models[node].refs if r in remaining)
    return path[path.index(node) :] + [node]


def topological_order(models: dict[str, ModelNode]) -> list[str]:
    """Models upstream-first (ties broken by name); a cycle is an error that prints it."""
    indegree = {name: len([r for r in node.refs if r in models]) for name, node in models.items()}
    children: dict[str, list[str]] = {name: [] for name in models}
    for name, node in models.items():
        for parent in node.refs:
            if parent in models:
                children[parent].append(name)
    ready = sorted(n for n, d in indegree.items() if d == 0)
    order: list[str] = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for child in children[name]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
        ready.sort()
    if len(order) != len(models):
        cycle = _find_cycle(models, set(models) - set(order))
        raise ConfigError(
            f"models form a cycle: {' -> '.join(cycle)}; remove one of these ref()s", model=cycle[0]
        )
    return order


def _closure(models: dict[str, ModelNode], start: set[str], *, upstream: bool) -> set[str]:
    edges: dict[str, list[str]] = {n: [] for n in models}
    for name, node in models.items():
        for parent in node.refs:
            if upstream:
                edges[name].append(parent)
            else:
                edges[parent].append(name)
    seen, stack = set(start), list(start)
    while stack:
        for nxt in edges[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


#: ``state:`` selector -> model names, from comparing with ``--state`` (None: no --state)
StateSets = Mapping[str, frozenset[str]] | None

#: what ``state:`` selectors accept (a model new to the state counts as modified too, as in dbt)
STATE_METHODS = ("new", "modified", "modified.body", "modified.configs", "modified.seeds")

_ACCEPTED = "+name, name+, tag:x, path:models/x, state:modified, a,b"


def _method(
    models: dict[str, ModelNode], core: str, root: Path, state: StateSets, given: str
) -> set[str]:
    """The models one selector without graph operators names (``given``: the whole selector)."""
    if core.startswith("tag:"):
        return {n for n, m in models.items() if core[4:] in m.tags}
    if core.startswith("path:"):
        wanted = (root / core[5:]).resolve()
        return {
            n
            for n, m in models.items()
            if m.path.resolve() == wanted or wanted in m.path.resolve().parents
        }
    if core.startswith("state:"):
        if core[6:] not in STATE_METHODS:
            raise ConfigError(
                f"selector '{core}' is not a state selector lakewide knows; accepted: "
                + ", ".join(f"state:{m}" for m in STATE_METHODS),
            )
        if state is None:
            raise ConfigError(
                f"selector '{given}' compares with an earlier run: give --state DIR, the target/ "
                "folder of that run (it holds manifest.json; run, build, test, ls, compile and "
                "plan take it)",
            )
        return set(state[core[6:]]) & set(models)
    if core not in models:
        raise ConfigError(
            f"selector '{given}' matches no model; models: "
            f"{', '.join(sorted(models))}; also accepted: {_ACCEPTED}"
        )
    return {core}


def _match(models: dict[str, ModelNode], selector: str, root: Path, state: StateSets) -> set[str]:
    """The models a selector names: ``a,b`` intersects, ``+`` adds up/downstream models."""
    chosen: set[str] | None = None
    for part in selector.split(","):
        up, down = part.startswith("+"), part.endswith("+")
        core = part.strip("+")
        base = _method(models, core, root, state, selector)
        found = set(base)
        if up:
            found |= _closure(models, base, upstream=True)
        if down:
            found |= _closure(models, base, upstream=False)
        chosen = found if chosen is None else chosen & found
    return chosen or set()


def _matches_nothing(models: dict[str, ModelNode], selector: str) -> str:
    """Why ``--select SELECTOR`` chose no model, and what would match."""
    if selector.startswith("tag:"):
        tags = sorted({t for m in models.values() for t in m.tags})
        hint = f"tags in this project: {', '.join(tags)}" if tags else "no model has a tag"
    else:
        hint = "give a folder or file under the project, e.g. path:models/wide"
    return (
        f"selector '{selector}' matches no model ({hint}); lakewide stops with exit code 2 "
        "when a --select selects nothing, so that a typo never passes as an empty run"
    )


def select(
    models: dict[str, ModelNode],
    selectors: list[str] | None,
    exclude: list[str] | None,
    root: Path,
    state: StateSets = None,
) -> list[str]:
    """Selected model names in run order (all models when no selector is given).

    ``state`` holds what the ``state:`` selectors select (``--state``). A selector that selects
    nothing is an error, except a ``state:`` one: a change that touches no model is no typo.
    """
    order = topological_order(models)
    chosen: set[str] = set(models) if not selectors else set()
    for selector in selectors or []:
        matched = _match(models, selector, root, state)
        if not matched and "state:" not in selector:
            raise ConfigError(_matches_nothing(models, selector))
        chosen |= matched
    for selector in exclude or []:
        chosen -= _match(models, selector, root, state)
    return [name for name in order if name in chosen]

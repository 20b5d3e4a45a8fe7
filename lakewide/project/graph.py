"""The model DAG: order, cycles and node selection.

Selectors: ``name``, ``+name``, ``name+``, ``tag:``, ``path:``.
"""

from __future__ import annotations

from pathlib import Path

from lakewide.errors import ConfigError
from lakewide.project.nodes import ModelNode


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


def _closure(models: dict[str, ModelNode], start: str, *, upstream: bool) -> set[str]:
    edges: dict[str, list[str]] = {n: [] for n in models}
    for name, node in models.items():
        for parent in node.refs:
            if upstream:
                edges[name].append(parent)
            else:
                edges[parent].append(name)
    seen, stack = {start}, [start]
    while stack:
        for nxt in edges[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _match(models: dict[str, ModelNode], selector: str, root: Path) -> set[str]:
    if selector.startswith("tag:"):
        return {n for n, m in models.items() if selector[4:] in m.tags}
    if selector.startswith("path:"):
        wanted = (root / selector[5:]).resolve()
        return {
            n
            for n, m in models.items()
            if m.path.resolve() == wanted or wanted in m.path.resolve().parents
        }
    up, down = selector.startswith("+"), selector.endswith("+")
    name = selector.strip("+")
    if name not in models:
        raise ConfigError(
            f"selector '{selector}' matches no model; models: "
            f"{', '.join(sorted(models))}; also accepted: +name, name+, tag:x, "
            "path:models/x"
        )
    chosen = {name}
    if up:
        chosen |= _closure(models, name, upstream=True)
    if down:
        chosen |= _closure(models, name, upstream=False)
    return chosen


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
    models: dict[str, ModelNode], selectors: list[str] | None, exclude: list[str] | None, root: Path
) -> list[str]:
    """Selected model names in run order (all models when no selector is given)."""
    order = topological_order(models)
    chosen: set[str] = set(models) if not selectors else set()
    for selector in selectors or []:
        matched = _match(models, selector, root)
        if not matched:
            raise ConfigError(_matches_nothing(models, selector))
        chosen |= matched
    for selector in exclude or []:
        chosen -= _match(models, selector, root)
    return [name for name in order if name in chosen]

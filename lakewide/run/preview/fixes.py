"""What fixes a change ``lakewide plan`` says a run would refuse: the command, as ``run``'s own
refusals name it, for the target whose tables the plan judged (the state's, else this one)."""

from __future__ import annotations

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation


def _run(target: str | None, *args: str) -> str:
    """``lakewide run [-t TARGET] ARGS`` as a command line."""
    return " ".join(["lakewide run", *(["-t", target] if target else []), *args])


def _downstream(manifest: Manifest, name: str) -> bool:
    return any(name in node.refs for node in manifest.models.values())


def rebuild_fix(manifest: Manifest, node: ModelNode, target: str | None) -> str:
    """A key table a change of its model refuses: ``run --full-refresh`` of it, and of the models
    downstream of it (``-s name+``) when it has any (they read what the rebuild replaces)."""
    more = _downstream(manifest, node.name)
    selector = f"{node.name}+" if more else node.name
    also = " and the models downstream of it" if more else ""
    return (
        f"`{_run(target, '--full-refresh', '-s', selector)}` rebuilds {node.name}{also} from "
        "every source with the new definition"
    )


def snapshot_fix(manifest: Manifest, node: ModelNode, table: Relation, target: str | None) -> str:
    """A snapshot whose definition changed: it is never rebuilt (its history would be lost)."""
    path = manifest.project.relative(node.path)
    return (
        f"restore the definition in {path}; or start a new history: `DROP TABLE {table}` "
        f"(Spark SQL), then `{_run(target, '-s', node.name)}`"
    )

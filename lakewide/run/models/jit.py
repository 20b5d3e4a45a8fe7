"""Which just-in-time compiler a run's JVM starts with (docs/reference/defaults.md).

A run that only merges into existing tables is short: much of its JVM's CPU goes to compiling
hot code with C2, which pays off only in long jobs. Such a run starts its JVM with C1 only
(``QUICK_JIT``); a run with any bootstrap, full refresh or ``table`` rebuild keeps the JVM's
tiered default, and so does a profile that sets ``spark.driver.extraJavaOptions`` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lakewide.project.manifest import Manifest
from lakewide.project.nodes import Relation

QUICK_JIT = "-XX:TieredStopAtLevel=1"


def merges_only(
    manifest: Manifest,
    names: Iterable[str],
    exists: Callable[[Relation], bool | None],
    full_refresh: bool,
) -> bool:
    """Whether running ``names`` only merges into tables that exist already.

    ``exists(relation)``: whether the table exists, None when that cannot be known without
    Spark (then the answer is False: a table may have to be built).
    """
    if full_refresh:
        return False
    for name in names:
        node = manifest.models[name]
        kind = node.config.kind
        if kind.is_view:
            continue
        if kind.rebuilt_each_run or exists(node.relation) is not True:
            return False
    return True

"""Spark's planning of a MERGE: the optimizer rules a MERGE runs without.

Iceberg rewrites a ``MERGE INTO`` into a join of the target and the batch under one node that
computes each written column (``MergeRows``). lakewide's MERGEs read and write every column of
the table (a row is written whole: merge-on-read deletes and re-inserts it, copy-on-write
rewrites its file), so Spark's ``ColumnPruning`` has nothing to remove there, yet over that
node it costs about as much as the rest of the planning together and grows faster than the
columns (a MERGE of 512 assignments into a 1,024-column table: 2.4 s of its 4.6 s of
planning, 2.1 s in all without it). The scan's own column pruning
(``V2ScanRelationPushDown``) still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

EXCLUDED = "spark.sql.optimizer.excludedRules"
#: rules a MERGE is planned without (see the module)
MERGE_EXCLUDED_RULES = ("org.apache.spark.sql.catalyst.optimizer.ColumnPruning",)


@contextmanager
def rules_excluded(spark: Any, rules: tuple[str, ...]) -> Iterator[None]:
    """``rules`` added to the session's excluded optimizer rules meanwhile (its own kept),
    the setting restored afterwards."""
    before = spark.conf.get(EXCLUDED, None)
    mine = [r for r in (before or "").split(",") if r.strip()]
    spark.conf.set(EXCLUDED, ",".join(mine + [r for r in rules if r not in mine]))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(EXCLUDED)
        else:
            spark.conf.set(EXCLUDED, before)


def planned_as_merge(spark: Any, action: Callable[[], T]) -> T:
    """Run ``action`` (a MERGE) planned without :data:`MERGE_EXCLUDED_RULES`."""
    with rules_excluded(spark, MERGE_EXCLUDED_RULES):
        return action()

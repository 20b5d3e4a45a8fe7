"""What a merge engine answers: its name and the behaviour questions config rules, the
compiler and the docs ask of it (the Paimon shape: an engine owns its rules).

Code outside ``lakewide.project.config.engines`` never compares an engine's name; it asks
the engine (``model.engine.picks_rows``) or, where a name must be written, takes it from
:data:`~lakewide.project.config.engines.registry.ENGINES`. This module imports nothing of
the config models, so ``keys`` can take the names from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

# the ``merge_engine`` values, in the order messages list them (each engine module's
# ``Engine.name``; the registry checks they agree)
MergeEngine = Literal["partial_update", "aggregation", "deduplicate", "first_row"]
ENGINE_NAMES: tuple[str, ...] = get_args(MergeEngine)


@dataclass(frozen=True)
class Engine:
    """One merge engine's traits (each engine module defines its one instance)."""

    name: str  # the ``merge_engine`` value
    # deduplicate / first_row: one record's whole row is kept (one ``__lw_v`` row version);
    # else each column is folded on its own
    picks_rows: bool = False
    # first_row: the first record (by order) is kept; else the last one
    keeps_first: bool = False
    # partial_update: each column takes the last non-null value of its records
    updates_columns: bool = False
    # aggregation: every value column is folded by its aggregate function, and
    # ``default_aggregate`` applies to every value column
    aggregates_values: bool = False
    # partial_update: ``sequence_groups`` and the ``remove_record_*`` keys; its
    # ``default_aggregate`` applies to the groups' columns
    takes_groups: bool = False
    # ``aggregates`` and ``default_aggregate``
    takes_aggregates: bool = False
    # whether retract rows (-U/-D) reach its folds (first_row drops them)
    takes_retracts: bool = True
    # partial_update: deletes need a policy (ignore_delete, remove_record_on_delete or
    # sequence groups); without one a changelog's deletes are refused
    needs_delete_policy: bool = False

    @property
    def keeps_last_row(self) -> bool:
        """deduplicate: the last record's whole row replaces the stored row."""
        return self.picks_rows and not self.keeps_first

    @property
    def label(self) -> str:
        """The name as prose (``first row``)."""
        return self.name.replace("_", " ")

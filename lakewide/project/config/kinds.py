"""Model kinds: what a model's ``config()`` makes of it, as objects with traits.

A model is a view, a table rebuilt from its query, an incremental (append-only) table, a
*key table* (a primary-key table folded by a merge engine: ``materialized='primary_key'``, or
any model with ``merge_engine``), or a snapshot (versions of rows by key). Other modules ask a
kind's traits (``kind.stores_rows``, ``kind.is_key_table``...) instead of comparing its name:
no module outside this package writes a kind's name (``tests/project/config/test_kinds.py``).

``ModelKind`` is a ``str`` enum whose values are the ``materialized`` values, so the name in
``manifest.json``, ``run_results.json`` and the compiled file names stays the config's word.
"""

from __future__ import annotations

from enum import Enum


class ModelKind(str, Enum):
    """The effective materialization of a model (``TableConfig.kind``)."""

    VIEW = "view"
    TABLE = "table"
    INCREMENTAL = "incremental"
    KEY_TABLE = "primary_key"
    SNAPSHOT = "snapshot"

    def __str__(self) -> str:  # the config's word in messages and file names
        return self.value

    @property
    def stores_rows(self) -> bool:
        """False for a view: it holds a query, no rows (nothing to read, expire or publish)."""
        return self is not ModelKind.VIEW

    @property
    def is_view(self) -> bool:
        """A catalog view (or, on a catalog without views, a temporary view per session)."""
        return self is ModelKind.VIEW

    @property
    def rebuilt_each_run(self) -> bool:
        """A table rebuilt in full from its query whenever an upstream changed."""
        return self is ModelKind.TABLE

    @property
    def appends(self) -> bool:
        """An incremental table: each run appends the query's new rows."""
        return self is ModelKind.INCREMENTAL

    @property
    def is_key_table(self) -> bool:
        """A primary-key table folded by a merge engine (its changes merged per key)."""
        return self is ModelKind.KEY_TABLE

    @property
    def keeps_versions(self) -> bool:
        """A snapshot: the versions of each key's row, valid from/to."""
        return self is ModelKind.SNAPSHOT

    @property
    def has_query_plans(self) -> bool:
        """Compiled to plans a unit test can run inline (a table's or a key table's query)."""
        return self in (ModelKind.TABLE, ModelKind.KEY_TABLE)


def kind_of(materialized: str | None, merge_engine: str | None) -> ModelKind:
    """The kind a config's ``materialized`` and ``merge_engine`` give (a merge engine makes a
    key table; no ``materialized`` makes a table)."""
    if merge_engine is not None:
        return ModelKind.KEY_TABLE
    return ModelKind(materialized) if materialized else ModelKind.TABLE


def names_a_view(materialized: object) -> bool:
    """Whether a raw, not yet validated ``materialized`` value asks for a view."""
    return materialized == ModelKind.VIEW.value

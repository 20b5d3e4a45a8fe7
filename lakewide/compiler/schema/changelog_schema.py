"""Rule: the ``ALTER TABLE`` statements that keep a model's changelog table in its model's
columns (``<model>__changelog``, lakewide.compiler.statements.build_changes).

A key table that keeps its own changelog changes its schema in place like any other
(lakewide.compiler.schema.schema_changes); its changelog table follows in the same run, before the
first change of the run is appended: a column the model writes now is added (the rows appended
before hold NULL in it, as the model's own rows written before it do), a column it no longer
writes is dropped (also one the model's table keeps under ``append_new_columns``: the changes
record what the model writes), a widened type is widened. The changes are appended by column
name, so the order the columns were added in does not matter.
"""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.schema.schema_changes import (
    add_columns,
    alter_type,
    drop_columns,
    promotable,
)
from lakewide.compiler.statements.build_changes import CHANGE_ORDINAL, CHANGE_TYPE, COMMIT
from lakewide.project.nodes import Relation

_OWN = frozenset({CHANGE_TYPE, CHANGE_ORDINAL, COMMIT})


def changelog_changes(
    changelog: Relation, present: dict[str, str], columns: dict[str, str]
) -> list[exp.Alter]:
    """The statements taking a changelog table of ``present`` columns (name -> Spark type) to
    the model's ``columns`` (its own columns, hidden ones left out, with their Spark types);
    empty when it has them. A type Iceberg cannot widen is left as it is (the model's own
    schema plan refuses that change before this runs)."""
    have = {name.lower(): (name, kind) for name, kind in present.items()}
    want = {name.lower() for name in columns}
    statements: list[exp.Alter] = []
    add = {name: kind for name, kind in columns.items() if name.lower() not in have}
    if add:
        statements.append(add_columns(changelog, add))
    drop = [name for low, (name, _) in have.items() if low not in want and name not in _OWN]
    if drop:
        statements.append(drop_columns(changelog, drop))
    for name, kind in columns.items():
        old = have.get(name.lower())
        if old is not None and old[1] != kind and promotable(old[1], kind):
            statements.append(alter_type(changelog, old[0], kind))
    return statements

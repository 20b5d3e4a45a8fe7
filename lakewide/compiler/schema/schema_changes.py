"""Rule: the plan of schema changes from a key table's stored contract to its model's current one.

Each difference is classified (``lakewide.compiler.schema.contract`` holds what is compared):

* a new source branch: ``ALTER TABLE ... ADD COLUMNS`` for the columns it brings; its whole
  history is then merged by the incremental MERGE (nothing of it was consumed), the other
  sources are untouched;
* a new column written by an existing source: added, and that source re-read in full when
  reading its rows again leaves the table unchanged (idempotent aggregates); else refused;
* a removed column or source: kept (``append_new_columns``), dropped (``sync_all_columns``:
  the columns no source writes any more) or refused (``fail``); always said;
* a type Iceberg widens in place (int -> bigint, float -> double, a wider decimal of the same
  scale): ``ALTER COLUMN ... TYPE``; any other type change is refused;
* a changed merge engine, primary key, sequence field, sequence groups, aggregate function or
  table-shaping config key, a source moved to another position (its index orders ties and is
  stored in version columns), a changed FROM/JOIN/WHERE of a source or a changed expression of
  a column it writes, or a new hidden version column for a column already stored: refused,
  naming what was stored and what is configured (``--full-refresh`` rebuilds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.compiler.model.versions import NON_NULL_PREFIX, PREFIX, ROW_COUNT, ROW_VERSION
from lakewide.compiler.schema.contract import Contract, SourceTerms
from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import DIALECT

POLICIES = ("append_new_columns", "sync_all_columns", "fail")
DEFAULT_POLICY = "append_new_columns"


@dataclass
class SchemaPlan:
    """What a run changes in a key table's schema before merging, and what it refuses."""

    policy: str
    notes: list[str] = field(default_factory=list)  # every change, as a line
    refusals: list[str] = field(default_factory=list)
    add: dict[str, str] = field(default_factory=dict)  # column -> Spark type
    drop: list[str] = field(default_factory=list)
    promote: dict[str, str] = field(default_factory=dict)  # column -> wider Spark type
    new_sources: set[int] = field(default_factory=set)  # branch positions
    reread: dict[int, list[str]] = field(default_factory=dict)  # position -> its new columns

    @property
    def changed(self) -> bool:
        """Whether the contract differs at all (the stored one is then rewritten)."""
        return bool(self.notes or self.refusals)


def _hidden_base(column: str) -> str | None:
    """The stored column a hidden column (a version, a non-null count) belongs to ("" for
    row-level ones); None for a model column."""
    if column in (ROW_VERSION, ROW_COUNT):
        return ""
    for prefix in (PREFIX, NON_NULL_PREFIX):
        if column.startswith(prefix):
            return column[len(prefix) :]
    return None


def _datatype(text: str) -> exp.DataType | None:
    try:
        return exp.DataType.build(text, dialect=DIALECT)
    except (ParseError, ValueError):
        return None


_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")


def promotable(stored: str, configured: str) -> bool:
    """Whether Iceberg widens ``stored`` to ``configured`` in place (Spark type names)."""
    if (stored, configured) in (("int", "bigint"), ("float", "double")):
        return True
    old, new = _DECIMAL.match(stored.replace(" ", "")), _DECIMAL.match(configured.replace(" ", ""))
    return bool(old and new and old[2] == new[2] and int(new[1]) > int(old[1]))


class _Classifier:
    def __init__(
        self, stored: Contract, configured: Contract, policy: str, reread: Mapping[int, str]
    ):
        self.stored, self.configured = stored, configured
        self.plan = SchemaPlan(policy)
        self.rereads = reread  # source position -> why re-reading it is not harmless

    def refuse(self, what: str) -> None:
        self.plan.refusals.append(what)

    def change(self, what: str) -> None:
        """A change the policy ``fail`` refuses, else applies."""
        if self.plan.policy == "fail":
            self.refuse(f"{what} (on_schema_change='fail')")
        else:
            self.plan.notes.append(what)

    def keys(self) -> None:
        s, c = self.stored, self.configured
        for name, old, new in (
            ("merge_engine", s.engine, c.engine),
            ("primary_key", s.primary_key, c.primary_key),
            ("sequence_field", s.sequence_field, c.sequence_field),
            ("sequence_groups", s.sequence_groups, c.sequence_groups),
        ):
            if old != new:
                self.refuse(f"{name} changed: stored {old!r}, configured {new!r}")
        for column in sorted(set(s.columns) & set(c.columns)):
            old_f, new_f = s.aggregates.get(column), c.aggregates.get(column)
            if old_f != new_f:
                self.refuse(
                    f"aggregate function of column {column} changed: stored "
                    f"{old_f or 'none'}, configured {new_f or 'none'}"
                )
        for key in sorted(set(s.options) | set(c.options)):
            if s.options.get(key) != c.options.get(key):
                self.refuse(
                    f"config {key} changed: stored {s.options.get(key)!r}, configured "
                    f"{c.options.get(key)!r}"
                )
        if s.layout != c.layout:
            self.refuse(
                f"lakewide's table layout changed: the table has layout {s.layout}, this "
                f"lakewide writes layout {c.layout}"
            )

    def sources(self) -> None:
        s, c = self.stored, self.configured
        for source in c.sources:
            old = s.source(source.source)
            if old is None:
                self.new_source(source)
            else:
                self.kept_source(old, source)
        for old in s.sources:
            if c.source(old.source) is None:
                self.change(
                    f"source {old.source} (branch {old.position + 1}) removed: the values it "
                    "wrote stay in the table"
                )

    def new_source(self, source: SourceTerms) -> None:
        taken = {t.position: t.source for t in self.stored.sources}
        if source.position in taken and self.configured.source(taken[source.position]):
            return  # an existing source moved off this position: refused there
        new = [col for col in source.columns if col not in self.stored.columns]
        self.change(
            f"new source {source.source} (branch {source.position + 1}): its whole history is "
            "merged"
            + (f", adding column(s) {', '.join(new)}" if new else "")
            + "; the other sources are not read again"
        )
        self.plan.new_sources.add(source.position)

    def kept_source(self, old: SourceTerms, new: SourceTerms) -> None:
        name = new.source
        if old.position != new.position:
            self.refuse(
                f"source {name} moved from branch {old.position + 1} to branch "
                f"{new.position + 1} (a source's position orders ties and is stored with its "
                "values; keep existing branches in place and add new sources last)"
            )
            return
        if old.shape != new.shape:
            self.refuse(
                f"source {name} reads differently (FROM/JOIN/WHERE/GROUP BY): stored "
                f"`{old.shape}`, configured `{new.shape}`"
            )
        for column in sorted(set(old.columns) | set(new.columns)):
            before, after = old.columns.get(column), new.columns.get(column)
            if before == after or before is None and column not in self.stored.columns:
                continue  # unchanged, or a new column (below)
            if after is None and column not in self.configured.columns:
                continue  # a removed column (``columns``)
            if before is None:  # the source now writes a column others wrote
                if new.position in self.rereads:
                    self.refuse(
                        f"source {name} now writes stored column {column}: filling it means "
                        f"reading all of {name} again, which {self.rereads[new.position]}"
                    )
                else:
                    self.reread(new.position, name, column)
                continue
            self.refuse(
                f"expression of column {column} in source {name} changed: stored "
                f"`{before}`, configured `{after or 'NULL'}`"
            )
        added = [c for c in new.columns if c not in old.columns and c not in self.stored.columns]
        for column in added:
            if new.position in self.rereads:
                self.refuse(
                    f"new column {column} in existing source {name}: filling it means reading "
                    f"all of {name} again, which {self.rereads[new.position]}"
                )
            else:
                self.reread(new.position, name, column)

    def reread(self, position: int, name: str, column: str) -> None:
        self.plan.reread.setdefault(position, []).append(column)
        self.change(
            f"column {column} of source {name}: source {name} is read again in full "
            "(harmless for its aggregates)"
        )

    def columns(self) -> None:
        s, c = self.stored, self.configured
        for column, kind in c.columns.items():
            if column not in s.columns:
                base = _hidden_base(column)
                if base is not None and (base == "" or base in s.columns):
                    what = "row versions" if base == "" else f"hidden state of column {base}"
                    self.refuse(
                        f"the table would need {what} ({column}), which its rows do not have "
                        "(a source now shares columns with another, or a first second source)"
                    )
                    continue
                self.plan.add[column] = kind
                if base is None and not any(column in t.columns for t in c.sources):
                    self.change(f"new column {column} (no source writes it)")
            elif s.columns[column] != kind:
                old = s.columns[column]
                if promotable(old, kind):
                    self.change(f"column {column} widened from {old} to {kind}")
                    self.plan.promote[column] = kind
                else:
                    self.refuse(
                        f"type of column {column} changed: stored {old}, configured {kind} "
                        "(Iceberg widens only int to bigint, float to double and decimal "
                        "precision)"
                    )
        for column in s.columns:
            if column in c.columns:
                continue
            if self.plan.policy == "sync_all_columns":
                self.plan.drop.append(column)
                if _hidden_base(column) is None:
                    self.plan.notes.append(f"column {column} dropped (sync_all_columns)")
            elif _hidden_base(column) is None:
                self.change(
                    f"column {column} kept in the table: no longer written (NULL in new rows)"
                )


def classify(
    stored: Contract, configured: Contract, policy: str, reread: Mapping[int, str]
) -> SchemaPlan:
    """The plan from ``stored`` to ``configured`` under ``policy`` (``on_schema_change``).

    ``reread``: per source position, why reading that source's rows again is not harmless for
    the model (a new column in it is then refused); a source missing from it is re-read.
    """
    classifier = _Classifier(stored, configured, policy, reread)
    classifier.keys()
    classifier.sources()
    classifier.columns()
    return classifier.plan


# ---------------------------------------------------------------------- statements


def add_columns(relation: Relation, columns: dict[str, str]) -> exp.Alter:
    """``ALTER TABLE <t> ADD COLUMNS (c type, ...)``."""
    defs = []
    for name, kind in columns.items():
        datatype = _datatype(kind)
        assert datatype is not None, f"a Spark type name: {kind}"
        defs.append(exp.ColumnDef(this=exp.to_identifier(name, quoted=True), kind=datatype))
    return exp.Alter(this=relation.table(), kind="TABLE", actions=[exp.Schema(expressions=defs)])


def drop_columns(relation: Relation, columns: list[str]) -> exp.Alter:
    """``ALTER TABLE <t> DROP COLUMNS (c, ...)``."""
    schema = exp.Schema(expressions=[exp.to_identifier(c, quoted=True) for c in columns])
    return exp.Alter(
        this=relation.table(), kind="TABLE", actions=[exp.Drop(kind="COLUMNS", tables=[schema])]
    )


def alter_type(relation: Relation, column: str, kind: str) -> exp.Alter:
    """``ALTER TABLE <t> ALTER COLUMN c TYPE <type>``."""
    datatype = _datatype(kind)
    assert datatype is not None, f"a Spark type name: {kind}"
    action = exp.AlterColumn(this=exp.to_identifier(column, quoted=True), dtype=datatype)
    return exp.Alter(this=relation.table(), kind="TABLE", actions=[action])


def set_property(relation: Relation, name: str, value: str) -> exp.Alter:
    """``ALTER TABLE <t> SET TBLPROPERTIES ('name' = 'value')``."""
    return set_properties(relation, {name: value})


def set_properties(relation: Relation, values: dict[str, str]) -> exp.Alter:
    """``ALTER TABLE <t> SET TBLPROPERTIES ('name' = 'value', ...)``: one metadata commit."""
    props = [
        exp.Property(this=exp.Literal.string(name), value=exp.Literal.string(value))
        for name, value in values.items()
    ]
    return exp.Alter(
        this=relation.table(),
        kind="TABLE",
        actions=[exp.AlterSet(expressions=[exp.Properties(expressions=props)])],
    )


def table_columns(relation: Relation) -> exp.Select:
    """``SELECT * FROM <t>``: analysed only, for the table's current columns and types."""
    return exp.select(exp.Star()).from_(relation.table())

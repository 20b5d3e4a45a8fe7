"""Rule: a key table's model contract, what its rows were folded by, stored in table properties.

The contract (table property ``lakewide.contract``, JSON) holds what the rows already in the
table depend on: the merge engine, primary key, sequence fields, sequence groups, each folded
column's aggregate function, the config keys that shape the table, every table column with its
Spark type (the hidden version columns too), and each source branch: its driving relation, its
position (the source index that orders ties, stored inside version columns), the branch without
its projections (FROM, JOIN, WHERE, ...) and the expression of every column it writes.

A source is identified by its driving relation (``lw.src.a``; a second branch over the same
relation is ``lw.src.a#2``), never by its position alone, so an added, removed or moved branch
is told as what it is. ``lakewide.compiler.schema.schema_changes`` compares a stored contract with
the model's current one.

Table properties are shared by every Iceberg branch of a table, so a run on branch ``NAME``
stores its contract, its digest (``lakewide.contract-inputs``) and the types of the analysed
query's columns beyond the table's (``lakewide.contract-fields``) under keys of its own
(``lakewide.contract@NAME``): main's contract stays the one main's rows were folded by. A run
on the branch reads the branch's keys where set (else main's: the branch was made from main);
publish copies them to main's keys and empties them; making the branch anew empties them.
The rules for those keys are here; ``lakewide.state.contract_store`` reads and writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlglot import exp

from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.trees.copying import copy_without
from lakewide.compiler.trees.rewrite import driving_table
from lakewide.vocabulary.dialect import DIALECT

CONTRACT = "lakewide.contract"  # the table property
CONTRACT_INPUTS = "lakewide.contract-inputs"  # the digest of what its types came from
# the same analysis's field types of the query's STRUCT columns beyond the table's (JSON): a
# bootstrap's folds (lakewide.run.models.fold_types), valid while the digest is
CONTRACT_FIELDS = "lakewide.contract-fields"
CONTRACT_VERSION = 1
LINE_KEYS = (CONTRACT, CONTRACT_INPUTS, CONTRACT_FIELDS)


def line_key(key: str, branch: str | None) -> str:
    """The table property ``key`` of the line ``branch`` (None: main): ``key@branch``."""
    return key if branch is None else f"{key}@{branch}"


def stored_on_line(
    get: Callable[[str], str | None], keys: Iterable[str], branch: str | None
) -> list[str | None]:
    """The values of ``keys`` for the line ``branch`` (``get``: a table property by name, None
    or "" when absent): the branch's own keys when it stored a contract, else main's."""
    keys = list(keys)
    if branch is not None and get(line_key(CONTRACT, branch)):
        return [get(line_key(k, branch)) or None for k in keys]
    return [get(k) or None for k in keys]


def line_published(get: Callable[[str], str | None], branch: str) -> dict[str, str]:
    """The properties that make the contract of line ``branch`` main's (its keys copied to
    main's, its own emptied); none when the branch stored no contract."""
    if not get(line_key(CONTRACT, branch)):
        return {}
    values = {k: get(line_key(k, branch)) or "" for k in LINE_KEYS}
    return values | {line_key(k, branch): "" for k in LINE_KEYS}


def line_cleared(get: Callable[[str], str | None], branch: str) -> dict[str, str]:
    """The properties that empty the contract keys of line ``branch`` that are set (a branch
    made anew reads main's contract, never an earlier branch's of its name)."""
    return {line_key(k, branch): "" for k in LINE_KEYS if get(line_key(k, branch))}


@dataclass(frozen=True)
class SourceTerms:
    """One source branch as the contract holds it."""

    source: str  # identity: the driving relation (``#n`` for its n-th branch)
    position: int  # the branch's index in the UNION ALL (0-based)
    shape: str  # the branch without its projections
    columns: dict[str, str]  # column it writes -> its expression (outer CAST left out)


@dataclass(frozen=True)
class Contract:
    """What the rows of a key table were folded by."""

    engine: str
    primary_key: list[str]
    sequence_field: list[str]
    sequence_groups: list[dict[str, Any]]
    aggregates: dict[str, str]  # folded column -> its function (with options)
    options: dict[str, Any]  # other config keys that shape the table (non-default ones)
    columns: dict[str, str]  # every table column -> its Spark type
    sources: list[SourceTerms] = field(default_factory=list)
    layout: int = 0
    definition: str = ""  # the model's definition digest when the contract was written
    version: int = CONTRACT_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Contract:
        data = json.loads(text)
        data["sources"] = [SourceTerms(**s) for s in data.get("sources", [])]
        return cls(**data)

    def source(self, identity: str) -> SourceTerms | None:
        return next((s for s in self.sources if s.source == identity), None)


def _sql(tree: exp.Expr) -> str:
    return tree.sql(DIALECT, pretty=False)


def _expression(projection: exp.Expr) -> str:
    """A column's expression without its outer CAST (the type is compared on its own)."""
    value = projection.this if isinstance(projection, exp.Alias) else projection
    if isinstance(value, (exp.Cast, exp.TryCast)):
        value = value.this
    return _sql(value)


def source_identities(model: WideModel) -> list[str]:
    """Each branch's identity, in branch order: its driving relation, ``#n`` for repeats."""
    seen: dict[str, int] = {}
    out = []
    for branch in model.branches:
        base = driving_table(branch.select) or f"branch_{branch.index + 1}"
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return out


def _aggregate_text(model: WideModel, column: str) -> str:
    found = model.aggregate(column)
    options = {k: v for k, v in sorted(found.options.items()) if v not in (None, False)}
    if not options:
        return found.name
    return f"{found.name}({', '.join(f'{k}={v!r}' for k, v in options.items())})"


def contract_of(
    model: WideModel,
    types: dict[str, str],
    *,
    options: dict[str, Any],
    definition: str = "",
    layout: int = 0,
) -> Contract:
    """The contract of ``model`` whose table columns have Spark ``types``; ``options``: the
    config keys that shape the table (``lakewide.run.schema.schema_steps.contract_options``)."""
    sources = [
        SourceTerms(
            identity,
            branch.index,
            _sql(copy_without(branch.select, "expressions")),
            {
                column: _expression(branch.projection(column, model.columns.index(column)))
                for column in model.columns
                if column in branch.owned
            },
        )
        for identity, branch in zip(source_identities(model), model.branches)
    ]
    return Contract(
        engine=model.engine.name,
        primary_key=list(model.primary_key),
        sequence_field=list(model.sequence),
        sequence_groups=[
            {"sequence": g.sequence, "columns": g.columns, "removes_record": g.removes_record}
            for g in model.groups
        ],
        aggregates={c: _aggregate_text(model, c) for c in model.aggregated},
        options=options,
        columns={c: types.get(c, "") for c in model.table_columns},
        sources=sources,
        layout=layout,
        definition=definition,
    )

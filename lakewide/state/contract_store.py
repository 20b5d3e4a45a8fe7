"""A key table's contract in its table properties, per branch line: the one reader and writer
of the keys lakewide.compiler.schema.contract names (main's ``lakewide.contract``,
``lakewide.contract-inputs`` and ``lakewide.contract-fields``, and ``...@NAME`` for a run on
Iceberg branch ``NAME``).

Each write is one ``ALTER TABLE ... SET TBLPROPERTIES``: one metadata commit, no snapshot, so
it changes no line's rows. A run stores its line's contract after its data (``write``);
publish makes a branch's main's once the table's main is on the branch's head (``publish``);
making a branch anew, or dropping it, empties the branch's keys (``clear``), so that a branch
of that name reads main's contract again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

from lakewide.compiler.schema.contract import (
    CONTRACT,
    CONTRACT_FIELDS,
    CONTRACT_INPUTS,
    Contract,
    line_cleared,
    line_key,
    line_published,
    stored_on_line,
)
from lakewide.compiler.schema.schema_changes import set_properties
from lakewide.project.nodes import Relation


class PropertyTables(Protocol):
    """What the store needs of the adapter (lakewide.spark.adapter.SparkAdapter)."""

    def table_property(self, relation: Relation, name: str) -> str | None: ...

    def sql(self, statement: exp.Expression) -> Any: ...

    def forget(self, relation: Relation) -> None: ...


#: a STRUCT column's field name -> its Spark type as JSON, per column
Fields = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class StoredContract:
    """What a line stored: its contract, the digest of what its types were analysed from, and
    that analysis's field types of the query's columns beyond the table's (None and empty for
    what is not stored)."""

    contract: Contract | None = None
    digest: str | None = None
    fields: Fields = field(default_factory=dict)


@dataclass(frozen=True)
class ContractStore:
    """The contracts of key tables, read and written through ``tables`` (the adapter)."""

    tables: PropertyTables

    def _get(self, relation: Relation) -> Callable[[str], str | None]:
        return lambda key: self.tables.table_property(relation, key)

    def _set(self, relation: Relation, values: dict[str, str]) -> None:
        if values:
            self.tables.sql(set_properties(relation, values))

    def read(self, relation: Relation, branch: str | None) -> StoredContract:
        """What the line ``branch`` (None: main) stored: the branch's own keys where it stored
        a contract, else main's (the branch was made from main)."""
        keys = [CONTRACT, CONTRACT_INPUTS, CONTRACT_FIELDS]
        text, digest, fields = stored_on_line(self._get(relation), keys, branch)
        return StoredContract(
            None if text is None else Contract.from_json(text),
            digest,
            _fields(fields) if fields and digest else {},
        )

    def write(
        self,
        relation: Relation,
        branch: str | None,
        contract: Contract,
        digest: str | None,
        fields: Fields | None = None,
    ) -> None:
        """Store ``contract`` for the line ``branch`` (None: main) with the digest of what its
        types were analysed from ("" when not known: a stored digest must never name other
        types) and ``fields``, that same analysis's (none without a digest)."""
        kept = json.dumps(fields, sort_keys=True, separators=(",", ":")) if fields else ""
        values = {
            line_key(CONTRACT, branch): contract.to_json(),
            line_key(CONTRACT_INPUTS, branch): digest or "",
            line_key(CONTRACT_FIELDS, branch): kept if digest else "",
        }
        self._set(relation, values)

    def publish(self, relation: Relation, branch: str) -> None:
        """Make the contract ``branch`` stored main's and empty the branch's keys (nothing
        when the branch stored none). Read afresh: main just moved to the branch's head."""
        self.tables.forget(relation)
        self._set(relation, line_published(self._get(relation), branch))

    def clear(self, relation: Relation, branch: str) -> None:
        """Empty the contract keys ``branch`` stored (nothing when it stored none)."""
        self._set(relation, line_cleared(self._get(relation), branch))


def _fields(text: str) -> Fields:
    """The stored fields, or none where the property holds anything else (they only spare a
    run the NULL placeholders of an untyped one shuffle: without them it sends that form)."""
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    valid = isinstance(found, dict) and all(
        isinstance(f, dict) and all(isinstance(t, str) for t in f.values()) for f in found.values()
    )
    return found if valid else {}

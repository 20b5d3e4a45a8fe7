"""The contract store's keys in a table's properties, through a dictionary standing for the
table (no JVM): the folds' field types go with the digest, on the run's line, and anything
else stored under their key reads as none."""

from __future__ import annotations

from typing import Any

import pytest
from sqlglot import exp

from lakewide.compiler.schema.contract import CONTRACT_FIELDS, Contract, line_key
from lakewide.project.nodes import Relation
from lakewide.state.contract_store import ContractStore

TABLE = Relation("lw", "db", "m")
CONTRACT = Contract(
    engine="partial_update",
    primary_key=["k"],
    sequence_field=[],
    sequence_groups=[],
    aggregates={},
    options={},
    columns={"k": "int", "v": "bigint"},
    sources=[],
)
FIELDS = {"__lw_s0": {"k": '"integer"', "v": '"long"'}}


class Properties:
    """A table's properties: what ``ALTER TABLE ... SET TBLPROPERTIES`` sets."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def table_property(self, relation: Relation, name: str) -> str | None:
        return self.values.get(name)

    def sql(self, statement: exp.Expression) -> Any:
        for prop in statement.find_all(exp.Property):
            self.values[prop.this.this] = prop.args["value"].this

    def forget(self, relation: Relation) -> None:
        pass


@pytest.mark.parametrize("branch", [None, "dev"])
def test_the_fields_are_stored_and_read_with_the_digest(branch: str | None) -> None:
    table = Properties()
    store = ContractStore(table)
    store.write(TABLE, branch, CONTRACT, "d1", FIELDS)
    read = store.read(TABLE, branch)
    assert (read.contract, read.digest, read.fields) == (CONTRACT, "d1", FIELDS)
    assert line_key(CONTRACT_FIELDS, branch) in table.values


def test_without_a_digest_no_fields_are_stored() -> None:
    table = Properties()
    ContractStore(table).write(TABLE, None, CONTRACT, None, FIELDS)
    assert table.values[CONTRACT_FIELDS] == ""
    assert ContractStore(table).read(TABLE, None).fields == {}


@pytest.mark.parametrize(
    "text", ["{not json", "[1, 2]", '{"__lw_s0": ["long"]}', '{"a": {"b": 1}}']
)
def test_anything_else_under_the_fields_key_reads_as_none(text: str) -> None:
    table = Properties()
    store = ContractStore(table)
    store.write(TABLE, None, CONTRACT, "d1", FIELDS)
    table.values[CONTRACT_FIELDS] = text
    read = store.read(TABLE, None)
    assert (read.contract, read.digest, read.fields) == (CONTRACT, "d1", {})

"""The contract keys of a table's lines: main's, and each branch's own (no JVM)."""

from __future__ import annotations

from lakewide.compiler.schema.contract import (
    CONTRACT,
    CONTRACT_FIELDS,
    CONTRACT_INPUTS,
    line_cleared,
    line_key,
    line_published,
    stored_on_line,
)

KEYS = [CONTRACT, CONTRACT_INPUTS]


def test_line_key_names_the_branch() -> None:
    assert line_key(CONTRACT, None) == "lakewide.contract"
    assert line_key(CONTRACT_INPUTS, "dev") == "lakewide.contract-inputs@dev"


def test_a_branch_reads_its_own_contract_and_digest_together() -> None:
    props = {
        CONTRACT: "main",
        CONTRACT_INPUTS: "main-digest",
        line_key(CONTRACT, "dev"): "dev",
        line_key(CONTRACT_INPUTS, "dev"): "",
    }
    assert stored_on_line(props.get, KEYS, None) == ["main", "main-digest"]
    # the digest comes from the branch's line, even empty: never main's next to dev's contract
    assert stored_on_line(props.get, KEYS, "dev") == ["dev", None]
    assert stored_on_line(props.get, KEYS, "other") == ["main", "main-digest"]


def test_a_branch_without_a_contract_of_its_own_reads_mains() -> None:
    props = {CONTRACT: "main", CONTRACT_INPUTS: "d", line_key(CONTRACT, "dev"): ""}
    assert stored_on_line(props.get, KEYS, "dev") == ["main", "d"]
    assert stored_on_line({}.get, KEYS, "dev") == [None, None]


def test_publishing_copies_the_branch_contract_to_main_and_empties_it() -> None:
    props = {
        CONTRACT: "main",
        CONTRACT_FIELDS: "main-fields",
        line_key(CONTRACT, "dev"): "dev",
        line_key(CONTRACT_INPUTS, "dev"): "x",
        line_key(CONTRACT_FIELDS, "dev"): "dev-fields",
    }
    assert line_published(props.get, "dev") == {
        CONTRACT: "dev",
        CONTRACT_INPUTS: "x",
        CONTRACT_FIELDS: "dev-fields",
        line_key(CONTRACT, "dev"): "",
        line_key(CONTRACT_INPUTS, "dev"): "",
        line_key(CONTRACT_FIELDS, "dev"): "",
    }
    assert line_published({CONTRACT: "main", line_key(CONTRACT, "dev"): ""}.get, "dev") == {}


def test_clearing_a_branch_empties_only_the_keys_it_set() -> None:
    props = {
        CONTRACT: "main",
        line_key(CONTRACT, "dev"): "dev",
        line_key(CONTRACT_FIELDS, "dev"): "f",
    }
    assert line_cleared(props.get, "dev") == {
        line_key(CONTRACT, "dev"): "",
        line_key(CONTRACT_FIELDS, "dev"): "",
    }
    assert line_cleared(props.get, "other") == {}

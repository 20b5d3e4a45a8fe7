"""The digest of what a key table's contract types were analysed from (no JVM): it names the
model's definition, every upstream's schema and the Spark version, and there is none where a schema is not
known or the snapshot read was written with another schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lakewide.compiler import PlanContext, compile_model
from lakewide.project.config.model_config import parse_model_config
from lakewide.project.nodes import ModelNode, Relation
from lakewide.run.schema.contract_inputs import inputs_digest, model_digest
from lakewide.state.offsets import Snapshot, TableColumn, TableMeta

A, B = Relation("lw", "src", "a"), Relation("lw", "src", "b")
DEFINITION = "a definition digest"


def meta(schema_id: int | None, *columns: tuple[str, str], written: int | None = 0) -> TableMeta:
    """A table whose current snapshot 1 was written with schema ``written``."""
    snapshot = Snapshot(1, None, "append", schema_id=written)
    return TableMeta(
        1,
        {1: snapshot},
        columns=tuple(TableColumn(n, t) for n, t in columns),
        schema_id=schema_id,
    )


def digest(
    a: TableMeta | None, b: TableMeta | None, definition: str = DEFINITION, spark: str = "3.5.6"
) -> str | None:
    return inputs_digest(definition, {A: (a, 1), B: (b, 1)}, spark)


BASE_A, BASE_B = meta(0, ("k", "int"), ("v", "int")), meta(0, ("k", "int"), ("w", "string"))


def test_the_same_inputs_give_the_same_digest_in_any_order() -> None:
    first = digest(BASE_A, BASE_B)
    assert first is not None and len(first) == 64
    assert inputs_digest(DEFINITION, {B: (BASE_B, 1), A: (BASE_A, 1)}, "3.5.6") == first


def test_each_input_changes_the_digest() -> None:
    first = digest(BASE_A, BASE_B)
    others = [
        digest(meta(1, ("k", "int"), ("v", "long"), written=1), BASE_B),  # a type promoted
        digest(meta(1, ("k", "int"), ("v", "int"), ("x", "int"), written=1), BASE_B),  # added
        digest(meta(1, ("k", "int"), ("u", "int"), written=1), BASE_B),  # renamed
        digest(BASE_A, BASE_B, definition="another model"),
        digest(BASE_A, BASE_B, spark="4.1.0"),
    ]
    assert None not in others and first not in others and len(set(others)) == len(others)


def test_no_digest_where_a_schema_is_not_known_or_the_snapshot_has_another() -> None:
    assert digest(None, BASE_B) is None  # the upstream table is missing
    assert digest(TableMeta(1, {1: Snapshot(1, None, "append")}), BASE_B) is None  # no schema
    # the snapshot read was written before the current schema (a column added since)
    assert digest(meta(1, ("k", "int"), ("v", "int"), written=0), BASE_B) is None
    assert digest(meta(0, ("k", "int"), ("v", "int"), written=None), BASE_B) is None


class _Versioned:
    """What model_digest asks of the adapter when the run pinned every upstream already."""

    spark_version = "3.5.6"

    def table_meta(self, relation: Relation) -> TableMeta:
        raise AssertionError(f"{relation} was pinned: its metadata is not read again")


def test_the_model_digest_names_the_pinned_upstreams_without_building_the_plans() -> None:
    """A run's digest is over the tables its plans pin, read from the plan context: building
    every plan of a wide model only for their names costs what the run's planning costs."""
    sql = "SELECT k, v, NULL AS w FROM lw.src.a UNION ALL SELECT k, NULL AS v, w FROM lw.src.b"
    config = parse_model_config(
        {"materialized": "primary_key", "primary_key": "k", "merge_engine": "partial_update"},
        path="m.sql",
    )
    node = ModelNode("m", Path("models/m.sql"), sql, sql, config, Relation("lw", "db", "m"))
    context = PlanContext({"lw.src.a": A, "lw.src.b": B})
    compiled = compile_model(node, context)
    metas = {"lw.src.a": BASE_A, "lw.src.b": BASE_B}
    adapter: Any = _Versioned()
    found = model_digest(adapter, compiled, metas, DEFINITION)
    assert "plans" not in compiled.__dict__
    plans = compiled.plans
    assert plans is not None
    pinned = {plans.tables[r.table]: (metas[r.table], 1) for r in plans.pins}
    assert found is not None and found == inputs_digest(DEFINITION, pinned, "3.5.6")

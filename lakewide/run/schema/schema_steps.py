"""A key table's schema changes at run time: its stored contract against its model's, the plan
said before it is applied, refused with exit 2 (nothing written) where only a rebuild is right.

The contract (``lakewide.compiler.schema.contract``) lives in the table property
``lakewide.contract`` (a branch's under keys of its own, read and written by
``lakewide.state.contract_store``); bootstrap and ``--full-refresh`` write it, and every run that
changes the schema rewrites it after its data commits (so a run stopped half-way plans the same
changes again: the ``ALTER`` statements are made only for what the table lacks, and a source's
offsets are what tells whether its history was merged). The statements come from
``lakewide.compiler.schema.schema_changes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakewide.compiler.model.wide_model import WideModel
from lakewide.compiler.schema.changelog_schema import changelog_changes
from lakewide.compiler.schema.contract import Contract, contract_of
from lakewide.compiler.schema.schema_changes import (
    DEFAULT_POLICY,
    SchemaPlan,
    add_columns,
    alter_type,
    classify,
    drop_columns,
    table_columns,
)
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.branches import made_at_main
from lakewide.state.contract_store import ContractStore, StoredContract
from lakewide.state.definition import LAYOUT_VERSION, definition_digest
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


# config keys that neither shape the table nor fold its rows, or that the contract holds in
# fields of its own (compared there, with their own messages)
_NOT_OPTIONS = frozenset(
    {
        "tags",
        "description",
        "enabled",
        "materialized",
        "changelog_producer",
        "on_schema_change",
        "freshness",
        "maintenance",
        "retention",
        "ttl",
        "merge_filter",
        "refresh_mode",
        "merge_engine",
        "primary_key",
        "sequence_field",
        "sequence_groups",
        "aggregates",
        "default_aggregate",
    }
)


def contract_options(node: ModelNode) -> dict[str, Any]:
    """The model's non-default config keys that shape its table (the contract's options)."""
    return node.config.model_dump(mode="json", exclude_defaults=True, exclude=set(_NOT_OPTIONS))


def policy_of(node: ModelNode) -> str:
    """The model's ``on_schema_change`` (default ``append_new_columns``)."""
    return getattr(node.config, "on_schema_change", None) or DEFAULT_POLICY


def reread_refusals(model: WideModel) -> dict[int, str]:
    """Per source position, why reading that source's rows again would change the table: the
    accumulating aggregates it feeds (they would count its rows twice). A source that feeds
    none is missing: re-reading it leaves the table as it is (an aggregation's stored row
    counts do not count its rows again: ``plan.rereading``)."""
    out = {}
    for branch in model.branches:
        folding = sorted(
            f"{model.aggregate(c).name}({c})"
            for c in model.aggregated
            if c in branch.owned and not model.aggregate(c).idempotent
        )
        if folding:
            out[branch.index] = f"would count its rows twice ({', '.join(folding)})"
    return out


@dataclass
class ModelSchema:
    """One key table: its stored contract, the model's, and the plan between them."""

    node: ModelNode
    path: str  # the model's file, relative to the project
    configured: Contract
    stored: Contract | None
    plan: SchemaPlan | None  # None without a stored contract (a table built before them)
    # the digest of what the configured types were analysed from (lakewide.run.
    # contract_inputs; None: not known without Spark), and the one stored with the table's
    digest: str | None = None
    stored_digest: str | None = None
    # the field types of the query's STRUCT columns beyond the table's (a bootstrap's folds,
    # lakewide.run.models.fold_types.with_fold_structs): this run's analysis, or stored with
    # the digest that answered for it; and the ones stored
    fields: dict[str, dict[str, str]] = field(default_factory=dict)
    stored_fields: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.plan is not None and self.plan.changed

    def lines(self) -> list[str]:
        """The plan as printed: a header, then a line per change (refusals are not: the
        SchemaChangeRefused error says them, once)."""
        assert self.plan is not None
        head = (
            f"schema changes of {self.node.name} ({self.node.relation}, "
            f"on_schema_change='{self.plan.policy}'):"
        )
        return [head, *(f"  {n}" for n in self.plan.notes)]


class SchemaChangeRefused(ConfigError):
    """Key tables whose model changed in a way only a rebuild makes right (exit code 2)."""

    def __init__(self, refused: list[ModelSchema]) -> None:
        self.refused = refused
        parts = []
        for schema in refused:
            assert schema.plan is not None
            changes = "; ".join(schema.plan.refusals)
            parts.append(
                f"model {schema.node.name} ({schema.path}): its table {schema.node.relation} "
                f"cannot take this change in place: {changes}"
            )
        selectors = " ".join(f"-s {s.node.name}+" for s in refused)
        super().__init__(
            "; ".join(parts) + ". Nothing was written. `lakewide run --full-refresh "
            f"{selectors}` rebuilds the table from every source with the new definition, and "
            "the models downstream of it with it."
        )


def model_schema(
    adapter: SparkAdapter,
    model: WideModel,
    query: exp.Expression,
    path: str,
    stored: bool = True,
    meta: TableMeta | None = None,
    digest: str | None = None,
    definition: str | None = None,
) -> ModelSchema:
    """Compare the stored contract with the model's; ``query``: the model's bootstrap query
    (Spark analyses it for the column types; no row is read) unless ``digest``, the digest of
    what its types depend on (lakewide.run.schema.contract_inputs), is the one stored with the
    contract, whose types are then the model's; ``stored=False``: the model's contract only
    (a new table); ``meta``: the table's metadata when the caller has read it already;
    ``definition``: the model's definition digest when the caller computed it (for
    ``digest``), else computed here. The stored contract is the output's line's
    (lakewide.state.contract_store)."""
    node = model.node
    line = (
        ContractStore(adapter).read(node.relation, contract_line(adapter, node.relation, meta))
        if stored
        else StoredContract()
    )
    found, stored_digest = line.contract, line.digest
    stored_fields = {c: dict(f) for c, f in line.fields.items()}
    if found is not None and digest is not None and stored_digest == digest:
        types = found.columns  # analysed from the same query over the same schemas
        fields = stored_fields  # by the same analysis
    else:
        types, analysed = adapter.types_and_fields(query)
        fields = {c: f for c, f in analysed.items() if c not in model.table_columns}
    configured = contract_of(
        model,
        types,
        options=contract_options(node),
        definition=definition_digest(node) if definition is None else definition,
        layout=LAYOUT_VERSION,
    )
    plan = None
    if found is not None:
        plan = classify(found, configured, policy_of(node), reread_refusals(model))
        present = table_column_names(adapter, node, meta)
        dropped = {c.lower() for c in plan.drop}  # a run stopped after its ALTER
        lost = [c for c in found.columns if c.lower() not in present | dropped]
        if lost:
            plan.refusals.append(
                f"the table no longer has column(s) {', '.join(lost)} of the schema lakewide "
                "stored with it (changed outside lakewide)"
            )
    return ModelSchema(
        node, path, configured, found, plan, digest, stored_digest, fields, stored_fields
    )


def contract_line(
    adapter: SparkAdapter, relation: Relation, meta: TableMeta | None = None
) -> str | None:
    """The line whose contract a run on the output's branch plans from: main's (None) where
    the run makes the table's branch at main's head, or moves it there (its keys, left by an
    earlier branch of that name, are stale: the run empties them); else the output's branch
    (``meta``: the table's metadata when read already)."""
    branch = adapter.output.branch
    if branch is None:
        return None
    if made_at_main(adapter.table_meta(relation) if meta is None else meta, branch):
        return None
    return branch


def table_column_names(
    adapter: SparkAdapter, node: ModelNode, meta: TableMeta | None = None
) -> set[str]:
    """The table's current column names, lower case: from its metadata (``meta``, else read)
    where lakewide reads it without Spark, else from Spark's analysis of the table."""
    meta = adapter.table_meta(node.relation) if meta is None else meta
    if meta is not None and meta.columns is not None:
        return {c.name.lower() for c in meta.columns}
    return {c.lower() for c in adapter.column_types(table_columns(node.relation))}


def apply_changes(adapter: SparkAdapter, schema: ModelSchema) -> int:
    """Make the planned ``ALTER TABLE`` statements the table still needs; how many ran."""
    plan, relation = schema.plan, schema.node.relation
    if plan is None or not (plan.add or plan.drop or plan.promote):
        return 0
    present = adapter.column_types(table_columns(relation))
    statements: list[exp.Expression] = []
    add = {c: t for c, t in plan.add.items() if c not in present}
    if add:
        statements.append(add_columns(relation, add))
    drop = [c for c in plan.drop if c in present]
    if drop:
        statements.append(drop_columns(relation, drop))
    statements += [
        alter_type(relation, c, t) for c, t in plan.promote.items() if present.get(c) != t
    ]
    for statement in statements:
        adapter.sql(statement)
    return len(statements)


def migrate_changelog(
    adapter: SparkAdapter, schema: ModelSchema, changelog: Relation, columns: list[str]
) -> int:
    """Bring the model's changelog table to the model's ``columns`` (its own, no hidden one)
    when the schema changed, before the run appends a change (lakewide.compiler.
    changelog_schema); how many statements ran. Made for what the table still lacks, so a run
    stopped half-way completes it."""
    if schema.plan is None or not schema.plan.changed or not adapter.table_exists(changelog):
        return 0
    present = adapter.column_types(table_columns(changelog))
    wanted = {c: schema.configured.columns[c] for c in columns}
    statements = changelog_changes(changelog, present, wanted)
    for statement in statements:
        adapter.sql(statement)
    return len(statements)


def write_contract(adapter: SparkAdapter, schema: ModelSchema) -> None:
    """Store the model's contract in the table's properties for the output's line with the
    digest of what its types were analysed from and that analysis's fields
    (lakewide.state.contract_store)."""
    ContractStore(adapter).write(
        schema.node.relation,
        adapter.output.branch,
        schema.configured,
        schema.digest,
        schema.fields,
    )


def record_contract(adapter: SparkAdapter, schema: ModelSchema) -> None:
    """After a run's data: store the model's contract when it, the digest of what its types
    were analysed from, or that analysis's fields differ from the stored ones (a stopped run
    plans again)."""
    if (
        schema.stored != schema.configured
        or (schema.digest or "") != (schema.stored_digest or "")
        or (schema.digest and schema.fields != schema.stored_fields)
    ):
        write_contract(adapter, schema)

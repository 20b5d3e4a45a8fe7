"""``lakewide plan``: what a run of the project as it is now would do, without a JVM.

Each model is ``new``, ``changed`` or ``unchanged``: against ``--state`` (its state digests,
``lakewide.artifacts.state_compare``), else against the definition digest stored with its
table's last commit. For a changed key table the stored contract (a table property, read with
pyiceberg) and the model's contract are classified by the run's own schema-change rules
(``lakewide.compiler.schema.schema_changes``): add a source, add a column, widen a type, or refuse.
With ``--state`` the models are judged as the state's target (production) renders them,
whichever target plans: each ``ref()`` and ``this`` names the table the state recorded
(``lakewide.artifacts.state_compare.rendered_as_state``), so a contract that names its
sources and lookup tables compares with the one production's run stored, and the table
compared is production's. A refusal comes with the command that fixes it
(``lakewide.run.preview.fixes``), for that target.

Column types come from the model's ``CAST``s where it has them, else from the stored
contract (a column whose expression did not change keeps its type); a type Spark alone could
tell (an uncast expression of a new column) shows as ``?``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakewide.artifacts.state_compare import State, compare, rendered_as_state
from lakewide.compiler.model.wide_model import WideModel, analyze
from lakewide.compiler.schema.contract import CONTRACT, Contract, contract_of, stored_on_line
from lakewide.compiler.schema.schema_changes import classify
from lakewide.project.graph import topological_order
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.run.preview.columns import (
    Columns,
    breaking_columns,
    key_types,
    query_columns,
    stored_columns,
)
from lakewide.run.preview.fixes import rebuild_fix, snapshot_fix
from lakewide.run.schema.schema_steps import contract_options, policy_of, reread_refusals
from lakewide.state.definition import LAYOUT_VERSION, definition_digest, stored_digest
from lakewide.state.metadata import CorruptMetadataError, MetadataReader
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.errors import ConfigError

UNREADABLE = (
    "this catalog's table metadata is not read without a JVM: `lakewide run --dry-run` "
    "says what a run does to the table"
)


@dataclass
class Downstream:
    """A model downstream of a changed one: whether the change breaks it."""

    name: str
    via: list[str]  # the changed models it reads (directly) or is downstream of
    breaking: bool = False
    columns: list[str] = field(default_factory=list)  # what it reads that changed or went away


@dataclass
class ModelPlan:
    """One model: its status and what its run does to its table."""

    name: str
    status: str  # new | changed | unchanged
    materialized: str
    relation: str
    table: str  # the table compared with
    modified: list[str] = field(default_factory=list)  # body, configs, seeds
    action: str = "none"  # none | bootstrap | rebuild | schema changes | refused | unknown
    changes: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # columns that went away
    retyped: dict[str, list[str]] = field(default_factory=dict)  # column -> [stored, now]
    fix: str = ""  # what makes a refused change run: the command, as a sentence


@dataclass
class Plan:
    """Every selected model's plan and the models downstream of the changed ones (those new or
    changed themselves aside: they are in ``models``)."""

    models: list[ModelPlan]
    downstream: list[Downstream]

    @property
    def refused(self) -> list[str]:
        return [m.name for m in self.models if m.action == "refused"]


def _statuses(
    manifest: Manifest, state: State | None, meta: dict[str, TableMeta | None]
) -> dict[str, tuple[str, list[str]]]:
    """Model of ``meta`` -> (status, what differs)."""
    if state is not None:
        sets = manifest.state or compare(manifest, state)
        return {
            name: (
                "new"
                if name in sets["new"]
                else "changed"
                if name in sets["modified"]
                else "unchanged",
                []
                if name in sets["new"]
                else [
                    k for k in ("body", "configs", "seeds") if name in sets.get(f"modified.{k}", ())
                ],
            )
            for name in meta
        }
    out: dict[str, tuple[str, list[str]]] = {}
    for name in meta:
        stored = stored_digest(meta[name])
        if meta[name] is None:
            out[name] = ("new", [])
        elif stored is not None and stored != definition_digest(manifest.models[name]):
            out[name] = ("changed", ["definition"])
        else:
            out[name] = ("unchanged", [])
    return out


def _read(reader: MetadataReader | None, relation: Relation) -> TableMeta | None:
    if reader is None:
        return None
    try:
        return reader.table_meta(relation)
    except CorruptMetadataError:
        return None


def key_contract(node: ModelNode, model: WideModel, types: dict[str, str]) -> Contract:
    """The contract a run of ``model`` stores, its columns of ``types``."""
    return contract_of(
        model,
        types,
        options=contract_options(node),
        definition=definition_digest(node),
        layout=LAYOUT_VERSION,
    )


def _key_table(plan: ModelPlan, node: ModelNode, meta: TableMeta, branch: str | None) -> Columns:
    """Classify a changed key table's contract change against the contract stored for the
    line ``branch`` (None: main); its columns as they will be."""
    model = analyze(node)
    [text] = stored_on_line((meta.properties or {}).get, [CONTRACT], branch)
    stored = Contract.from_json(text) if text else None
    types = key_types(model, stored)
    configured = key_contract(node, model, types)
    if stored is None:
        plan.action = "refused"
        plan.refusals.append(
            "the table was built before lakewide stored contracts: only a rebuild "
            "(--full-refresh) applies a changed definition"
        )
    else:
        schema = classify(stored, configured, policy_of(node), reread_refusals(model))
        plan.changes, plan.refusals = schema.notes, schema.refusals
        plan.action = (
            "refused" if schema.refusals else "schema changes" if schema.changed else "none"
        )
    return {c: t for c, t in types.items() if c in model.columns}


def _model_plan(
    manifest: Manifest,
    node: ModelNode,
    status: tuple[str, list[str]],
    meta: TableMeta | None,
    target: str | None,
    branch: str | None = None,
) -> tuple[ModelPlan, Columns | None]:
    """``node`` as ``manifest`` (the judged one) renders it; its table is ``node.relation``,
    compared on the line ``branch`` (None: main)."""
    plan = ModelPlan(
        node.name,
        status[0],
        node.config.merge_engine or node.config.kind,
        str(node.relation),
        str(node.relation),
        status[1],
    )
    if plan.status == "unchanged":
        return plan, None
    if node.config.kind.is_key_table and meta is not None:
        after = _key_table(plan, node, meta, branch)  # a model that does not compile: exit 2
        if plan.refusals:
            plan.fix = rebuild_fix(manifest, node, target)
    elif node.config.kind.keeps_versions and meta is not None:
        plan.action = "refused"
        only = (
            " (unless only tags, description or freshness changed)"
            if plan.modified == ["configs"]
            else ""
        )
        plan.refusals.append(
            "a snapshot keeps history its input no longer holds: its table is never rebuilt; "
            f"restore the definition, or drop the table to start a new history{only}"
        )
        plan.fix = snapshot_fix(manifest, node, node.relation, target)
        return plan, None
    else:
        after = query_columns(node)
        plan.action = "bootstrap" if meta is None else "rebuild"
    before = stored_columns(meta)
    if before is not None and after:
        plan.removed = [c for c in before if c not in after]
        plan.retyped = {
            c: [before[c], after[c]]
            for c in before
            if c in after and "?" not in (before[c], after[c]) and before[c] != after[c]
        }
    return plan, after


def plan_changes(
    manifest: Manifest,
    names: list[str],
    state: State | None,
    reader: MetadataReader | None,
    variables: dict[str, Any] | None = None,
) -> Plan:
    """The plan of the models ``names`` (in run order) and of the models downstream of them.

    With ``state`` each model is judged as the state's target renders it (``variables``: the
    ``--vars`` given), against the table the state recorded; its ``relation`` is this target's.
    Without ``state`` each model is compared with its table: a ConfigError where the catalog's
    metadata is not read without a JVM (``reader`` None). A key table's contract is the one
    stored for the output's branch (main's with ``state``: production's table)."""
    if state is None and reader is None:
        raise ConfigError(
            f"plan without --state compares each model with its table; {UNREADABLE}. Give "
            "--state DIR (the target/ folder of the production run) to compare with its "
            "manifest.json instead",
            key="--state",
        )
    judged = manifest if state is None else rendered_as_state(manifest, state, variables or {})
    target = manifest.output.target_name if state is None else state.target or None
    branch = manifest.output.branch if state is None else None
    meta = {n: _read(reader, judged.models[n].relation) for n in names}
    statuses = _statuses(manifest, state, meta)
    models: list[ModelPlan] = []
    broken: dict[str, ModelPlan] = {}
    for name in names:
        plan, _after = _model_plan(
            judged, judged.models[name], statuses[name], meta[name], target, branch
        )
        plan.relation = str(manifest.models[name].relation)
        if reader is None and plan.status != "unchanged":
            plan.action = "unknown"  # the table was not read: what a run does depends on it
            plan.changes, plan.refusals, plan.fix = [UNREADABLE], [], ""
        models.append(plan)
        if plan.status == "changed":
            broken[name] = plan
    touched = {m.name for m in models if m.status != "unchanged"}
    touched |= (manifest.state or {}).get("modified", frozenset())
    found = _downstream(judged, broken)
    return Plan(models, [d for d in found if d.name not in touched])


def _downstream(manifest: Manifest, changed: dict[str, ModelPlan]) -> list[Downstream]:
    """The models downstream of ``changed``, each told whether a column it reads from a changed
    model went away or changed type."""
    found: dict[str, Downstream] = {}
    for name in _order_downstream(manifest, set(changed)):
        node = manifest.models[name]
        via = sorted(
            {r for r in node.refs if r in changed}
            | {v for r in node.refs if r in found for v in found[r].via}
        )
        item = Downstream(name, via)
        for ref in node.refs:
            if ref in changed:
                parent = changed[ref]
                item.columns += breaking_columns(
                    node, manifest.models[ref], parent.removed, parent.retyped
                )
        item.breaking = bool(item.columns)
        found[name] = item
    return list(found.values())


def _order_downstream(manifest: Manifest, start: set[str]) -> list[str]:
    seen = set(start)
    for name in topological_order(manifest.models):
        if any(r in seen for r in manifest.models[name].refs):
            seen.add(name)
    return [n for n in topological_order(manifest.models) if n in seen - start]

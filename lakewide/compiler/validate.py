"""Rule: reject the merge-engine configurations Paimon rejects, with the fix in the message."""

from __future__ import annotations

from sqlglot import exp

from lakewide.compiler.aggregates import REGISTRY
from lakewide.compiler.column_aggregates import DEFAULT_FUNCTION
from lakewide.compiler.wide_model import WideModel
from lakewide.errors import CompileError

POLICY_CHOICES = (
    "choose one: 1. ignore_delete=true to drop delete and update-before rows; "
    "2. remove_record_on_delete=true to remove the whole row on -D; "
    "3. sequence_groups={...} to retract only the columns of a group")
DELETE_POLICIES = ("partial_update cannot take delete rows (row_kind_column is set) without a "
                   "policy; " + POLICY_CHOICES)


def _fail(model: WideModel, key: str, message: str) -> None:
    raise CompileError(message, path=model.node.path, model=model.node.name, key=key)


def _check_aggregates(model: WideModel) -> None:
    for column, aggregate in model.aggregates.items():
        if not aggregate.configured:
            continue
        key, name, function = f"aggregates.{column}", aggregate.name, aggregate.function
        if column not in model.stored or column in model.primary_key:
            _fail(model, key, f"'{column}' is not a value column of the model")
        declared = model.declared.get(column)
        if function.types and declared is not None and not function.types.admits(declared):
            _fail(model, key, f"{name} cannot aggregate column '{column}' of type "
                  f"{declared.sql('spark').upper()}; it takes {', '.join(function.types.names)}")
        retracts = model.row_kind is not None and not model.deletes.ignore_delete
        if retracts and aggregate.refuses_retracts:
            _fail(model, key, f"{name} cannot retract (-U/-D rows arrive through "
                  f"row_kind_column '{model.row_kind}'); set "
                  f"aggregates={{'{column}': {{'function': '{name}', 'ignore_retract': true}}}} "
                  "or ignore_delete=true. Retractable: "
                  f"{', '.join(n for n, f in REGISTRY.items() if f.retracts)}")


def _check_groups(model: WideModel) -> None:
    seen: dict[str, str] = {}
    for group in model.groups:
        label = group.name
        for column in group.all_columns:
            if column not in model.stored:
                _fail(model, "sequence_groups", f"group '{label}' names '{column}', which is not "
                      f"a column of the model (columns: {', '.join(model.stored)})")
            if column in model.primary_key:
                _fail(model, "sequence_groups", f"primary key column '{column}' cannot be in "
                      f"sequence group '{label}'")
            if column in seen and seen[column] != label:
                _fail(model, "sequence_groups", f"column '{column}' is in two sequence groups "
                      f"('{seen[column]}' and '{label}')")
            seen[column] = label
        for branch in model.branches:
            owned = [c for c in group.all_columns if c in branch.owned]
            if owned and len(owned) != len(group.all_columns):
                missing = [c for c in group.all_columns if c not in branch.owned]
                _fail(model, "sequence_groups", f"UNION ALL branch {branch.index + 1} "
                      f"({branch.name}) owns part of group '{label}' but not "
                      f"{', '.join(missing)}; a source writes a whole group or none of it")
    default = model.default_function
    if model.engine == "partial_update" and default is not None \
            and default.name != DEFAULT_FUNCTION:
        fixed = {*model.primary_key, *model.sequence, model.row_kind}
        outside = [c for c in model.stored if c not in fixed and model.group_of(c) is None
                   and c not in model.aggregates]
        if outside:
            _fail(model, "default_aggregate", f"partial_update applies default_aggregate "
                  f"{default.name!r} to the columns of sequence groups, and '{outside[0]}' is in "
                  "no group; add it to sequence_groups or drop default_aggregate (Paimon: "
                  "aggregation functions need a sequence group)")
    for column, aggregate in model.aggregates.items():
        if (aggregate.configured and model.group_of(column) is None
                and model.engine == "partial_update" and aggregate.name != DEFAULT_FUNCTION):
            _fail(model, f"aggregates.{column}", f"partial_update can aggregate '{column}' "
                  f"with {aggregate.name} only inside a sequence group; add it to "
                  "sequence_groups")


def typed_aggregates(model: WideModel) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Aggregated columns whose function takes only some types and whose branches declare no
    type with CAST: column -> (function, Spark's names of the accepted types)."""
    out = {}
    for column in model.stored:
        if column in model.primary_key + model.sequence or column == model.row_kind:
            continue
        if model.engine != "aggregation" and not model.group_aggregated(column):
            continue
        aggregate = model.aggregate(column)
        types = aggregate.function.types
        if types is not None and column not in model.declared:
            out[column] = (aggregate.name, types.names)
    return out


def type_probes(model: WideModel) -> list[exp.Select]:
    """Per branch, its projection of the aggregated columns whose type the SQL does not
    declare: the engine analyses them (no rows read) and :func:`check_probed_types` checks the
    types it reports, before anything is written."""
    typed = typed_aggregates(model)
    probes = []
    for branch in model.branches:
        columns = [c for c in typed if c in branch.owned]
        if columns:
            probes.append(branch.projected(columns))
    return probes


def check_probed_types(model: WideModel, types: dict[str, str]) -> None:
    """Raise CompileError when a probed column's type (Spark's name, any case) does not suit
    its aggregate function (the run plan's ``CheckTypes`` step)."""
    from lakewide.plan import CheckTypes

    CheckTypes(exp.Null(), typed_aggregates(model), str(model.node.path),
               model.node.name).check(types)


def validate(model: WideModel) -> None:
    """Raise CompileError for combinations Paimon rejects (the README's "Validation" list)."""
    deletes, engine = model.deletes, model.engine
    removes_on_group = any(g.removes_record for g in model.groups)
    if deletes.ignore_delete and deletes.remove_record_on_delete:
        _fail(model, "remove_record_on_delete", "ignore_delete and remove_record_on_delete "
              "contradict each other; keep one")
    if deletes.remove_record_on_delete and model.groups:
        _fail(model, "remove_record_on_delete", "remove_record_on_delete cannot be combined with "
              "sequence_groups (groups retract their own columns); use "
              "remove_record_on_sequence_group")
    if engine != "partial_update":
        for key, given in (("sequence_groups", bool(model.groups)),
                           ("remove_record_on_delete", deletes.remove_record_on_delete),
                           ("remove_record_on_sequence_group", removes_on_group)):
            if given:
                _fail(model, key, f"{key} applies to merge_engine='partial_update', "
                      f"not '{engine}'")
    if engine not in ("aggregation", "partial_update") and (model.aggregates
                                                         or model.default_function):
        _fail(model, "aggregates", f"aggregates apply to merge_engine='aggregation' (or "
              f"partial_update sequence groups), not '{engine}'")
    if engine == "first_row":
        if model.sequence:
            _fail(model, "sequence_field", "first_row keeps the first arrived row and takes no "
                  "sequence_field; drop it or use merge_engine='deduplicate'")
        if model.row_kind and not deletes.ignore_delete:
            _fail(model, "ignore_delete", "first_row cannot take -U/-D rows; set "
                  "ignore_delete=true")
    if model.row_kind is not None and model.row_kind not in model.columns:
        _fail(model, "row_kind_column", f"row_kind_column '{model.row_kind}' is not a column of "
              f"the model (columns: {', '.join(model.columns)})")
    if model.row_kind in model.primary_key + model.sequence:
        _fail(model, "row_kind_column", "the row kind column cannot be a key or sequence column")
    if engine == "partial_update" and model.row_kind and not (
            deletes.ignore_delete or deletes.remove_record_on_delete or model.groups):
        _fail(model, "row_kind_column", DELETE_POLICIES)
    if deletes.ignore_update_before and not model.row_kind:
        _fail(model, "ignore_update_before", "ignore_update_before drops -U rows, which arrive "
              "through row_kind_column; set row_kind_column or drop ignore_update_before")
    if removes_on_group and not model.row_kind:
        _fail(model, "remove_record_on_sequence_group", "removing rows on a group retract needs "
              "row_kind_column (where retracts come from)")
    _check_groups(model)
    _check_aggregates(model)

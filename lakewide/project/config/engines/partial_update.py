"""The partial_update merge engine: non-null values overwrite, sequence groups order their
own columns; Paimon's partial-update rules that need only the config (model validators)."""

from __future__ import annotations

from typing import ClassVar, Literal

from lakewide.project.config.engines.base import Engine
from lakewide.project.config.keys import KeyTableConfig
from lakewide.project.config.specs import (
    DEFAULT_AGGREGATE,
    DELETE_POLICIES,
    RuleError,
)

PARTIAL_UPDATE = Engine(
    name="partial_update",
    updates_columns=True,
    takes_groups=True,
    takes_aggregates=True,
    needs_delete_policy=True,
)


class PartialUpdateConfig(KeyTableConfig):
    """``merge_engine='partial_update'``: non-null values overwrite, groups by their sequence."""

    merge_engine: Literal["partial_update"]
    engine: ClassVar[Engine] = PARTIAL_UPDATE

    def rules(self) -> None:
        """Paimon's partial-update rules: one delete policy, groups without keys, aggregate
        functions only inside groups."""
        super().rules()
        if self.ignore_delete and self.remove_record_on_delete:
            raise RuleError(
                "remove_record_on_delete",
                "ignore_delete and remove_record_on_delete contradict each other; keep one",
            )
        if self.remove_record_on_delete and self.sequence_groups:
            raise RuleError(
                "remove_record_on_delete",
                "remove_record_on_delete cannot be "
                "combined with sequence_groups (groups retract their own columns); "
                "use remove_record_on_sequence_group",
            )
        if self.row_kind_column and not (
            self.ignore_delete or self.remove_record_on_delete or self.sequence_groups
        ):
            raise RuleError("row_kind_column", DELETE_POLICIES)
        if self.remove_record_on_sequence_group and not self.row_kind_column:
            raise RuleError(
                "remove_record_on_sequence_group",
                "removing rows on a group retract needs row_kind_column (where retracts come from)",
            )
        self._groups_rules()

    def _groups_rules(self) -> None:
        seen: dict[str, str] = {}
        for group in self.sequence_groups:
            for column in group.all_columns:
                if column in self.primary_key:
                    raise RuleError(
                        "sequence_groups",
                        f"primary key column '{column}' cannot be in sequence group '{group.name}'",
                    )
                if column in seen and seen[column] != group.name:
                    raise RuleError(
                        "sequence_groups",
                        f"column '{column}' is in two sequence "
                        f"groups ('{seen[column]}' and '{group.name}')",
                    )
                seen[column] = group.name
        names = {g.name for g in self.sequence_groups}
        for name in self.remove_record_on_sequence_group:
            if name not in names:
                raise RuleError(
                    "remove_record_on_sequence_group",
                    f"'{name}' is not a sequence "
                    f"group; groups: {', '.join(sorted(names)) or 'none'}",
                )
        for column, spec in self.aggregates.items():
            if column not in seen and spec.function != DEFAULT_AGGREGATE:
                raise RuleError(
                    f"aggregates.{column}",
                    f"partial_update can aggregate "
                    f"'{column}' with {spec.function} only inside a sequence group; "
                    "add it to sequence_groups",
                )

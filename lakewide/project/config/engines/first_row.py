"""The first_row merge engine: the first arrived record's row is kept."""

from __future__ import annotations

from typing import ClassVar, Literal

from lakewide.project.config.engines.base import Engine
from lakewide.project.config.keys import KeyTableConfig
from lakewide.project.config.specs import RuleError

FIRST_ROW = Engine(
    name="first_row",
    picks_rows=True,
    keeps_first=True,
    takes_retracts=False,
)


class FirstRowConfig(KeyTableConfig):
    """``merge_engine='first_row'``: the first arrived row wins."""

    merge_engine: Literal["first_row"]
    engine: ClassVar[Engine] = FIRST_ROW

    def rules(self) -> None:
        """first_row has no sequence and cannot take retracts."""
        super().rules()
        if self.sequence_field:
            raise RuleError(
                "sequence_field",
                "first_row keeps the first arrived row and takes "
                "no sequence_field; drop it or use merge_engine='deduplicate'",
            )
        if self.row_kind_column and not self.ignore_delete:
            raise RuleError(
                "ignore_delete", "first_row cannot take -U/-D rows; set ignore_delete=true"
            )

"""The deduplicate merge engine: the last record by sequence replaces the row."""

from __future__ import annotations

from typing import ClassVar, Literal

from lakewide.project.config.engines.base import Engine
from lakewide.project.config.keys import KeyTableConfig

DEDUPLICATE = Engine(
    name="deduplicate",
    picks_rows=True,
)


class DeduplicateConfig(KeyTableConfig):
    """``merge_engine='deduplicate'``: the last row by sequence wins; a delete deletes."""

    merge_engine: Literal["deduplicate"]
    engine: ClassVar[Engine] = DEDUPLICATE

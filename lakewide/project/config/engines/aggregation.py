"""The aggregation merge engine: every value column folded by its aggregate function."""

from __future__ import annotations

from typing import ClassVar, Literal

from lakewide.project.config.engines.base import Engine
from lakewide.project.config.keys import KeyTableConfig

AGGREGATION = Engine(
    name="aggregation",
    aggregates_values=True,
    takes_aggregates=True,
)


class AggregationConfig(KeyTableConfig):
    """``merge_engine='aggregation'``: every value column folded by its aggregate function."""

    merge_engine: Literal["aggregation"]
    engine: ClassVar[Engine] = AGGREGATION

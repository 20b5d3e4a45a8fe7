"""Every merge engine by name: its traits (``ENGINES``) and its config model (``CONFIGS``)."""

from __future__ import annotations

from lakewide.project.config.engines.aggregation import AggregationConfig
from lakewide.project.config.engines.base import ENGINE_NAMES, Engine
from lakewide.project.config.engines.deduplicate import DeduplicateConfig
from lakewide.project.config.engines.first_row import FirstRowConfig
from lakewide.project.config.engines.partial_update import PartialUpdateConfig
from lakewide.project.config.keys import KeyTableConfig

CONFIGS: dict[str, type[KeyTableConfig]] = {
    c.engine.name: c
    for c in (PartialUpdateConfig, AggregationConfig, DeduplicateConfig, FirstRowConfig)
}
ENGINES: dict[str, Engine] = {name: config.engine for name, config in CONFIGS.items()}
assert tuple(ENGINES) == ENGINE_NAMES, "each merge_engine name has one engine module"


def engine_named(name: str) -> Engine:
    """The engine of a ``merge_engine`` value (a validated config's: KeyError otherwise)."""
    return ENGINES[name]

"""What the docs show beside the SQL: descriptions and data tests of a model.

The docs ask a ``PropertiesOf`` (model name -> ModelProperties) so that descriptions and tests
parsed from ``models/*.yml`` can be shown by passing another provider; ``from_config`` reads
what ``config(description=...)`` gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lakewide.manifest import Manifest


@dataclass
class ModelProperties:
    """A model's documentation: its description, its columns' and its data tests."""

    description: str | None = None
    columns: dict[str, str] = field(default_factory=dict)  # column -> description
    # each test as shown: {"name", "column" (optional), "severity", "compiled_code" (optional)}
    tests: list[dict[str, Any]] = field(default_factory=list)


PropertiesOf = Callable[[str], ModelProperties]


def from_config(manifest: Manifest) -> PropertiesOf:
    """Descriptions from each model's ``config(description=...)``; no tests."""

    def properties(model: str) -> ModelProperties:
        node = manifest.models.get(model)
        return ModelProperties(node.config.description if node is not None else None)

    return properties

"""A throwaway Iceberg hadoop catalog in a temporary folder, registered in a running
SparkSession: model unit tests write their inputs and targets there, never to the project's
warehouse."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CATALOG_PREFIX = "lw_unit_"


@contextmanager
def scratch_catalog(spark: Any) -> Iterator[tuple[str, Path]]:
    """Register ``lw_unit_<id>`` (hadoop, a new temporary warehouse) in ``spark``; yield its
    name and folder; afterwards forget its settings and delete the folder."""
    name = CATALOG_PREFIX + uuid.uuid4().hex[:12]
    folder = Path(tempfile.mkdtemp(prefix="lakewide-unit-"))
    prefix = f"spark.sql.catalog.{name}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hadoop",
        f"{prefix}.warehouse": str(folder),
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield name, folder
    finally:
        for key in settings:
            spark.conf.unset(key)
        shutil.rmtree(folder, ignore_errors=True)

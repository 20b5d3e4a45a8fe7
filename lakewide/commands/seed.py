"""``lakewide seed``: seeds/*.csv into Iceberg tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from lakewide.commands.services.context import Options, pass_options, profile_options
from lakewide.commands.services.seeds import check_seeds, load_and_report
from lakewide.commands.services.spark_start import with_adapter
from lakewide.project.manifest import Manifest

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@click.command()
@profile_options
@pass_options
def seed(options: Options) -> None:
    """Load seeds/*.csv into Iceberg tables."""

    def body(manifest: Manifest, adapter: SparkAdapter) -> int:
        load_and_report(manifest, adapter)
        return 0

    with_adapter(options, body, check=check_seeds)

"""``lakewide debug``: Java, the jars, the profile and the catalog, checked in turn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from lakewide.commands.output.console import console
from lakewide.commands.services.context import Options, pass_options, profile_options
from lakewide.commands.services.spark_start import check_output, spark_log
from lakewide.project.manifest import Manifest
from lakewide.project.profiles import warehouse_path
from lakewide.state.warehouse_probe import is_unchecked

if TYPE_CHECKING:
    from lakewide.spark.adapter import SparkAdapter


@click.command()
@profile_options
@pass_options
def debug(options: Options) -> None:
    """Check Java, the Iceberg jars, the profile and that the catalog answers."""
    from lakewide.spark.adapter import SparkAdapter
    from lakewide.spark.jars import bundled_jars, spark_build
    from lakewide.spark.java import find_java

    manifest = options.manifest()
    check_output(manifest.output, writes=False)
    java = find_java()
    console.print(f"java: {java.executable} (Java {java.major})")
    build = spark_build()
    console.print(f"spark: {build.version} (Scala {build.scala})")
    user_conf = manifest.output.spark_conf
    if "spark.jars.packages" in user_conf or "spark.jars" in user_conf:
        console.print("jars: from the profile's spark_conf")
    else:
        for jar in bundled_jars([Path(j).expanduser() for j in manifest.output.jars]):
            console.print(f"jar: {jar}")
    console.print(
        f"profile: {manifest.project.profile} -> catalog {manifest.output.catalog} "
        f"({manifest.output.catalog_type}, {manifest.output.warehouse or manifest.output.uri})"
    )
    rest = _rest_check(manifest)
    if rest:
        console.print(rest)
    storage = _storage_check(manifest)
    console.print(storage)
    adapter = SparkAdapter(manifest.output, "lakewide-debug")
    spark_log(adapter, manifest)
    try:
        console.print(_catalog_check(manifest, adapter))
    finally:
        adapter.stop()
    if is_unchecked(storage):
        console.print("[yellow]the other checks passed; the storage was not checked[/yellow]")
    else:
        console.print("[green]all checks passed[/green]")


def _rest_check(manifest: Manifest) -> str | None:
    """A REST catalog's endpoint and credential checked through pyiceberg before any JVM
    starts (RuntimeSetupError, exit 2, secrets masked, when it does not answer or refuses)."""
    output = manifest.output
    if output.catalog_type != "rest":
        return None
    from lakewide.state.rest_metadata import RestMetadataReader

    RestMetadataReader(output).catalog()  # GET /v1/config, and the OAuth2 exchange if any
    auth = "credential" if output.credential else "token" if output.token else "no credential"
    return f"catalog {output.catalog}: REST endpoint {output.uri} answered ({auth} accepted)"


def _storage_check(manifest: Manifest) -> str:
    """A small object written, read and deleted in the warehouse (lakewide.state.
    warehouse_probe) before Spark starts; a REST catalog's storage is where it keeps tables
    (RestMetadataReader.storage_location: its warehouse, a new table's location, a table's)."""
    from lakewide.state.warehouse_probe import not_checked, probe_warehouse

    output = manifest.output
    location = output.warehouse
    if output.catalog_type == "rest":
        from lakewide.state.rest_metadata import RestMetadataReader, is_location

        if not is_location(location):
            location, found = RestMetadataReader(output).storage_location(output.namespace)
            if location is None:
                return not_checked(found)
            return f"{probe_warehouse(output, location)} ({found})"
    return probe_warehouse(output, location)


def _catalog_check(manifest: Manifest, adapter: SparkAdapter) -> str:
    """One line about the catalog; a local hadoop warehouse not created yet is fine (new
    projects have none until the first ``seed``/``build``)."""
    output = manifest.output
    adapter.start()
    local = warehouse_path(output.warehouse) if output.catalog_type == "hadoop" else None
    if local is not None and not local.is_dir():
        return (
            f"catalog {output.catalog}: warehouse {local} does not exist yet "
            "(the first `lakewide seed` or `lakewide build` creates it)"
        )
    namespaces = adapter.namespaces()
    return f"catalog {output.catalog}: reachable ({len(namespaces)} namespaces)"

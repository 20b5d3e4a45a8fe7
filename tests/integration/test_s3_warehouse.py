"""A 4-source partial_update wide table whose warehouse is on S3 (moto's server on 127.0.0.1,
tests/support/s3_server.py) behind a JDBC catalog in PostgreSQL and behind Iceberg's REST catalog
test server (tests/support/rest_server.py, S3FileIO on its side too; one server per store for
the module's REST tests, each test its own Spark catalog name and namespaces). The REST tests
run on s3proxy too (tests/support/s3proxy_server.py, an S3-compatible store that refuses the AWS
SDK's default request checksums, with the documented profile), in the soak leg (``-m soak``; the
default run has s3proxy's first write in test_s3_compatible.py): bootstrap, an incremental run
exact against a plain-Python fold, the no-op run, ``lineage`` and ``docs generate`` reading
metadata without a JVM (JDBC: the metadata file over S3; REST: inline in the server's answer),
run tags, ``maintain`` and a ``--full-refresh`` twin (on JDBC + moto and REST + s3proxy;
REST + moto leaves them out, as the same steps of the other two). Spark writes through
Iceberg's S3FileIO with the AWS SDK bundle from Maven Central on its classpath. The repository's example project
too, on both: seeded, built and run incrementally, the rows of the hadoop catalog's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakewide.commands.services.spark_start import shared_session
from lakewide.project.jdbc import DATABASES
from lakewide.project.nodes import Relation
from lakewide.state.readers import metadata_reader
from tests.integration.conftest import REPO, ProjectRun
from tests.integration.test_jdbc_catalog import (
    APPENDS,
    MODELS,
    add_catalog,
    cli,
    copy_example_parts,
    no_java,
    require_jdbc,
    table_rows,
)
from tests.integration.test_newcomer import SOURCES, _fold, _model, _rows
from tests.support.postgres_server import PostgresServer, missing_prerequisite
from tests.support.project_factory import run_main
from tests.support.rest_server import rest_classpath, start_rest
from tests.support.s3_server import S3Server, aws_bundle_jar

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SECRET_ENV = "LW_IT_S3_SECRET"
COLUMNS = ["customer_id", *(c for owned in SOURCES.values() for c in owned)]
# downstream of the wide table: it reads customer_360__changelog (a tier change retracts)
TIERS = """
{{ config(merge_engine='aggregation', primary_key='tier', aggregates={'n': 'sum'}) }}
SELECT tier, CAST(1 AS BIGINT) AS n FROM {{ ref('customer_360') }} WHERE tier IS NOT NULL
"""
FIRST: dict[str, list[dict[str, Any]]] = {
    "profiles": [
        {"customer_id": 1, "name": "Ada", "tier": "gold"},
        {"customer_id": 2, "name": "Grace", "tier": "silver"},
    ],
    "orders": [{"customer_id": 1, "order_count": 3, "zip": "00123"}],
    "tickets": [{"customer_id": 4, "ticket_id": "T2"}],
    "loyalty": [{"customer_id": 1, "points": 10}],
}
LATER: dict[str, list[dict[str, Any]]] = {
    "profiles": [{"customer_id": 1, "name": "Ada", "tier": "bronze"}],
    "loyalty": [{"customer_id": 5, "points": 3}, {"customer_id": 1, "points": 12}],
}


def bundle() -> Path:
    jar = aws_bundle_jar()
    if jar is None:
        missing_prerequisite(
            "iceberg-aws-bundle missing from ~/.m2: mvn dependency:get "
            "-Dartifact=org.apache.iceberg:iceberg-aws-bundle:1.10.1"
        )
    assert jar is not None
    return jar


def s3_profile(catalog: str, target: str, s3: Any, key_id: str, jars: list[Path]) -> str:
    """A profile whose target ``target`` (YAML lines of the catalog) keeps its tables on S3."""
    listed = ", ".join(f"'{j}'" for j in jars)
    return (
        "shop:\n  target: team\n  outputs:\n    team:\n"
        f"      master: local[2]\n      catalog: {catalog}\n{target}"
        f"      s3_endpoint: {s3.endpoint}\n      s3_region: us-east-1\n"
        "      s3_path_style_access: true\n"
        f"      s3_access_key_id: {key_id}\n"
        f"      s3_secret_access_key: \"{{{{ env_var('{SECRET_ENV}') }}}}\"\n"
        f"      jars: [{listed}]\n      namespace: analytics\n"
    )


def write_project(root: Path, profile: str) -> Path:
    """The customer_360 project (four sources in namespace ``raw``) with ``profile``."""
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.lakewide]\nprofile = "shop"\n')
    (root / "profiles.yml").write_text(profile)
    tables = "".join(f"      - name: {t}\n" for t in SOURCES)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: raw\n    schema: raw\n    tables:\n{tables}"
    )
    config = (
        "changelog_producer='lookup', maintenance={'expire_after': '0 seconds', 'retain_last': 1}"
    )
    model = _model(SOURCES).replace("'customer_id')", f"'customer_id', {config})")
    (root / "models" / "customer_360.sql").write_text(model)
    (root / "models" / "tiers.sql").write_text(TIERS)
    return root


def tiers(wide: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The downstream's oracle: customers per tier of the wide table's rows."""
    counts: dict[str, int] = {}
    for row in wide:
        tier = row[COLUMNS.index("tier")]
        if tier is not None:
            counts[tier] = counts.get(tier, 0) + 1
    return sorted(counts.items())


def insert(spark: Any, catalog: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Append ``rows`` (source -> rows) to the source tables."""
    for source, batch in rows.items():
        columns = ["customer_id", *SOURCES[source]]
        values = ", ".join(
            "(" + ", ".join(repr(r[c]) if r.get(c) is not None else "NULL" for c in columns) + ")"
            for r in batch
        )
        spark.sql(f"INSERT INTO {catalog}.raw.{source} VALUES {values}")


def lifecycle(
    root: Path,
    spark: Any,
    s3: Any,
    label: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    maintain: bool = True,
) -> None:
    """Bootstrap, a tagged incremental CLI run, JVM-free no-op run / lineage / docs, then
    (``maintain``) maintain and the full refresh in a JVM of its own: each exact, none printing
    the S3 secret."""
    key_id, secret = s3.writer
    monkeypatch.setenv(SECRET_ENV, secret)
    run = ProjectRun(root, spark, "analytics", "raw")
    output = run.manifest().output
    catalog = output.catalog
    add_catalog(spark, output)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.raw")
    for source, owned in SOURCES.items():
        columns = ", ".join(f"{c} {t}" for c, t in {"customer_id": "int", **owned}.items())
        spark.sql(f"CREATE TABLE {catalog}.raw.{source} ({columns}) USING iceberg")
    insert(spark, catalog, FIRST)
    relation = f"{catalog}.analytics.customer_360"

    assert run.run()["customer_360"].plan == "bootstrap"
    assert _rows(spark, relation, COLUMNS) == _fold(FIRST, COLUMNS)
    insert(spark, catalog, LATER)
    with shared_session(spark):  # the CLI's run, on this session: it tags the run
        code, out = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert code == 0, out
    assert secret not in out
    both = {s: FIRST.get(s, []) + LATER.get(s, []) for s in SOURCES}
    expected = _fold(both, COLUMNS)
    assert _rows(spark, relation, COLUMNS) == expected
    assert _rows(spark, f"{catalog}.analytics.tiers", ["tier", "n"]) == tiers(expected)
    assert spark.catalog.tableExists(relation + "__changelog")
    files = spark.sql(f"SELECT file_path FROM {relation}.files").collect()
    assert files and all(r[0].startswith(f"s3://{s3.bucket}/{label}-wh/") for r in files)

    # metadata without a JVM (over S3 for JDBC): the reader sees the run tags Spark wrote
    reader = metadata_reader(output)
    assert reader is not None
    meta = reader.table_meta(Relation(catalog, "analytics", "customer_360"))
    assert meta is not None and meta.tags, meta
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    jvm_free = {SECRET_ENV: secret, **no_java(root.parent), "PYTHONPATH": pythonpath}
    for args in (("run",), ("lineage", "customer_360"), ("docs", "generate")):
        done, seconds = cli(root, jvm_free, *args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert secret not in done.stdout + done.stderr
        with capsys.disabled():  # the figure, not swallowed by the next run_main's capture
            print(f"\n{label}+s3: `lakewide {' '.join(args)}` without a JVM: {seconds:.2f} s")
        if args == ("run",):
            results = json.loads((root / "target" / "run_results.json").read_text())
            assert results["spark_started"] is False

    if not maintain:
        return
    # maintain (compaction, expiry, orphan files) on S3, then the full-refresh twin
    with shared_session(spark):
        code, out = run_main(monkeypatch, capsys, "--project-dir", str(root), "maintain")
    assert code == 0, out
    assert secret not in out
    assert "2 maintained, 0 failed" in out, out
    kinds = spark.sql(f"SELECT operation FROM {relation}.snapshots").collect()
    assert "replace" in {r[0] for r in kinds}  # the compaction committed on S3
    assert _rows(spark, relation, COLUMNS) == expected
    # the full-refresh twin by `lakewide run` in its own JVM: lakewide's session set-up (the
    # bundle from `jars:`, the secret set at runtime) on S3
    env = {SECRET_ENV: secret, "PYTHONPATH": pythonpath}
    done, seconds = cli(root, env, "run", "--full-refresh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert secret not in done.stdout + done.stderr
    print(f"\n{label}+s3: `lakewide run --full-refresh` (JVM start included) took {seconds:.1f} s")
    for table in (relation, f"{catalog}.analytics.tiers"):
        spark.catalog.refreshTable(table)
    assert _rows(spark, relation, COLUMNS) == expected
    assert _rows(spark, f"{catalog}.analytics.tiers", ["tier", "n"]) == tiers(expected)
    last = spark.sql(f"SELECT operation FROM {relation}.snapshots ORDER BY committed_at").collect()
    assert last[-1][0] == "overwrite", last  # the twin rewrote the table


def test_wide_table_on_jdbc_and_s3(
    tmp_path: Path,
    spark: Any,
    postgres_server: PostgresServer,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    require_jdbc("postgresql")
    database = postgres_server.create_database("s3_wide")
    target = (
        "      catalog_type: jdbc\n"
        f"      uri: {postgres_server.jdbc_uri(database)}\n"
        f"      user: {postgres_server.user}\n"
        f"      password: {postgres_server.password}\n"
        f"      warehouse: s3://{s3_server.bucket}/jdbc-wh\n"
    )
    jars = [DATABASES["postgresql"].debian_jar, bundle()]
    profile = s3_profile("pgs3", target, s3_server, s3_server.writer[0], jars)
    root = write_project(tmp_path / "shop", profile)
    lifecycle(root, spark, s3_server, "jdbc", monkeypatch, capsys)


#: the REST server's JVM on an S3-compatible store: the AWS SDK's checksums only where an
#: operation requires them (the environment variables the docs give a server's container)
SERVER_CHECKSUMS = {
    "AWS_REQUEST_CHECKSUM_CALCULATION": "WHEN_REQUIRED",
    "AWS_RESPONSE_CHECKSUM_VALIDATION": "WHEN_REQUIRED",
}


def rest_on_s3(folder: Path, s3: Any) -> Any:
    """Iceberg's REST catalog test server keeping its tables on S3 (S3FileIO on its side)."""
    key_id, secret = s3.writer
    server_side = {
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": s3.endpoint,
        "s3.path-style-access": "true",
        "s3.access-key-id": key_id,
        "s3.secret-access-key": secret,
        "client.region": "us-east-1",
    }
    folder.mkdir()
    warehouse = f"s3://{s3.bucket}/{folder.name}-wh"
    return start_rest(
        folder,
        rest_classpath(folder),
        warehouse_uri=warehouse,
        catalog_properties=server_side,
        environment=SERVER_CHECKSUMS,
    )


#: the REST tests run on moto and on s3proxy; s3proxy's in the soak leg (``-m soak``), the
#: default run has the same checks on moto and s3proxy's first write in test_s3_compatible
STORES = pytest.mark.parametrize(
    "s3_store", ["moto", pytest.param("s3proxy", marks=pytest.mark.soak)], indirect=True
)


@pytest.fixture(scope="module")
def rest_s3(tmp_path_factory: pytest.TempPathFactory, s3_store: Any) -> Iterator[Any]:
    """One REST catalog server on ``s3_store`` for the module's REST tests (warehouse
    ``s3://<bucket>/rest-wh``; each test its own Spark catalog name and namespaces)."""
    server = rest_on_s3(tmp_path_factory.mktemp(f"rest-{s3_store.name}") / "rest", s3_store)
    try:
        yield server
    finally:
        server.stop()


@STORES
def test_wide_table_on_rest_and_s3(
    tmp_path: Path,
    spark: Any,
    s3_store: Any,
    rest_s3: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = f"      catalog_type: rest\n      uri: {rest_s3.uri}\n"
    catalog = f"rests3_{s3_store.name}"  # the test session keeps each catalog it loaded
    profile = s3_profile(catalog, target, s3_store, s3_store.writer[0], [bundle()])
    root = write_project(tmp_path / "shop", profile)
    # maintain and the full-refresh twin: on JDBC + moto and on REST + s3proxy (the soak leg);
    # REST + moto would repeat them (a JVM of its own, about 20 s on 2 cores)
    maintain = s3_store.name != "moto"
    lifecycle(root, spark, s3_store, "rest", monkeypatch, capsys, maintain=maintain)


def example_on_s3(
    root: Path,
    spark: Any,
    s3: Any,
    profile: str,
    reference: dict[str, dict[str, list[tuple]]],
    monkeypatch: pytest.MonkeyPatch,
    namespace: str = "analytics",
) -> None:
    """The repository's example project (seeds, five models in ``namespace``) built and run
    incrementally with its tables on S3: the rows of the same project on the hadoop catalog,
    each time."""
    monkeypatch.setenv(SECRET_ENV, s3.writer[1])
    copy_example_parts(root)
    (root / "profiles.yml").write_text(profile.replace("shop:", "lakewide_example:", 1))
    run = ProjectRun(root, spark, namespace, "ods")
    output = run.manifest().output
    catalog = output.catalog
    add_catalog(spark, output)
    run.seed()
    assert run.run()["user_rec_wide"].plan == "bootstrap"
    assert {m: table_rows(spark, f"{catalog}.{namespace}.{m}") for m in MODELS} == reference[
        "build"
    ]
    for statement in APPENDS:
        spark.sql(statement.format(ods=f"{catalog}.ods"))
    results = run.run()
    assert results["user_rec_wide"].plan == "incremental"
    assert results["order_detail"].plan == "incremental"
    rows = {m: table_rows(spark, f"{catalog}.{namespace}.{m}") for m in MODELS}
    assert rows == reference["appended"]
    files = spark.sql(f"SELECT file_path FROM {catalog}.{namespace}.user_rec_wide.files").collect()
    assert files and all(r[0].startswith(f"s3://{s3.bucket}/") for r in files)


def test_example_on_jdbc_and_s3(
    tmp_path: Path,
    spark: Any,
    postgres_server: PostgresServer,
    s3_server: S3Server,
    hadoop_reference: dict[str, dict[str, list[tuple]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_jdbc("postgresql")
    database = postgres_server.create_database("s3_example")
    target = (
        "      catalog_type: jdbc\n"
        f"      uri: {postgres_server.jdbc_uri(database)}\n"
        f"      user: {postgres_server.user}\n"
        f"      password: {postgres_server.password}\n"
        f"      warehouse: s3://{s3_server.bucket}/jdbc-example-wh\n"
    )
    jars = [DATABASES["postgresql"].debian_jar, bundle()]
    profile = s3_profile("pgex", target, s3_server, s3_server.writer[0], jars)
    example_on_s3(tmp_path / "example", spark, s3_server, profile, hadoop_reference, monkeypatch)


@STORES
def test_example_on_rest_and_s3(
    tmp_path: Path,
    spark: Any,
    s3_store: Any,
    rest_s3: Any,
    hadoop_reference: dict[str, dict[str, list[tuple]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = f"      catalog_type: rest\n      uri: {rest_s3.uri}\n"
    catalog = f"restex_{s3_store.name}"
    profile = s3_profile(catalog, target, s3_store, s3_store.writer[0], [bundle()])
    profile = profile.replace("namespace: analytics", "namespace: example")  # beside the wide's
    example_on_s3(
        tmp_path / "example", spark, s3_store, profile, hadoop_reference, monkeypatch, "example"
    )

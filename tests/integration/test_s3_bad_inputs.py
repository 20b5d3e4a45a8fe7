"""Bad S3 inputs on a real run (JDBC catalog in SQLite, warehouse on moto's S3 server): a
warehouse bucket that does not exist, then a key whose policy may only read. Each run fails its
model (exit 1) with a message naming the cause and not the secret, leaves no table created or
commit made, and the run after the fix (bucket created, write granted) is exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.commands.services.spark_start import shared_session
from lakewide.project.jdbc import DATABASES
from tests.integration.conftest import ProjectRun
from tests.integration.test_jdbc_catalog import add_catalog, require_jdbc
from tests.integration.test_newcomer import SOURCES, _fold, _rows
from tests.integration.test_s3_warehouse import (
    COLUMNS,
    FIRST,
    LATER,
    SECRET_ENV,
    bundle,
    insert,
    s3_profile,
    write_project,
)
from tests.support.project_factory import run_main
from tests.support.s3_server import READ_ONLY, S3Server

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_missing_bucket_then_read_only_key_fail_cleanly_and_the_fix_runs_exact(
    tmp_path: Path,
    spark: Any,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    require_jdbc("sqlite")
    key_id, secret = s3_server.user("lakewide-flip", ["s3:*"])
    monkeypatch.setenv(SECRET_ENV, secret)
    bucket = "lakewide-late"  # created only after the first run failed
    target = (
        "      catalog_type: jdbc\n"
        f"      uri: jdbc:sqlite:{tmp_path / 'catalog.db'}\n"
        f"      warehouse: s3://{bucket}/wh\n"
    )
    jars = [DATABASES["sqlite"].debian_jar, bundle()]
    root = write_project(tmp_path / "shop", s3_profile("bad3", target, s3_server, key_id, jars))
    run = ProjectRun(root, spark, "analytics", "raw")
    add_catalog(spark, run.manifest().output)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS bad3.raw")
    for source, owned in SOURCES.items():  # the sources live in the bucket that exists
        columns = ", ".join(f"{c} {t}" for c, t in {"customer_id": "int", **owned}.items())
        where = f"s3://{s3_server.bucket}/bad3-sources/{source}"
        spark.sql(f"CREATE TABLE bad3.raw.{source} ({columns}) USING iceberg LOCATION '{where}'")
    insert(spark, "bad3", FIRST)
    relation = "bad3.analytics.customer_360"

    def lakewide_run() -> tuple[int, str]:
        with shared_session(spark):
            return run_main(monkeypatch, capsys, "--project-dir", str(root), "run")

    code, out = lakewide_run()
    assert code == 1, out
    assert "NoSuchBucket" in out or "bucket does not exist" in out, out
    assert secret not in out and "Traceback" not in out
    assert not spark.catalog.tableExists(relation)  # nothing half-created in the catalog
    s3_server.create_bucket(bucket)
    code, out = lakewide_run()
    assert code == 0, out
    assert _rows(spark, relation, COLUMNS) == _fold(FIRST, COLUMNS)

    # the key loses its write permission: the run fails, the table keeps its last commit
    insert(spark, "bad3", LATER)
    before = spark.sql(f"SELECT snapshot_id FROM {relation}.snapshots").collect()
    s3_server.allow("lakewide-flip", READ_ONLY)
    with s3_server.authenticated():
        code, out = lakewide_run()
    assert code == 1, out
    assert "403" in out and "Access Denied" in out.replace("AccessDenied", "Access Denied"), out
    assert secret not in out and "Traceback" not in out
    assert spark.sql(f"SELECT snapshot_id FROM {relation}.snapshots").collect() == before
    assert _rows(spark, relation, COLUMNS) == _fold(FIRST, COLUMNS)
    s3_server.allow("lakewide-flip", ["s3:*"])
    with s3_server.authenticated():
        code, out = lakewide_run()
    assert code == 0, out
    both = {s: FIRST.get(s, []) + LATER.get(s, []) for s in SOURCES}
    assert _rows(spark, relation, COLUMNS) == _fold(both, COLUMNS)

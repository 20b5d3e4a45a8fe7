"""An S3-compatible store that refuses the AWS SDK's default request checksums: s3proxy
(tests/support/s3proxy_server.py) behind Iceberg's REST catalog test server. With the documented REST +
S3 profile (``s3_endpoint`` set, ``s3_checksums`` left out: ``when_required``), the first write,
``lakewide load``, lands; with ``s3_checksums: when_supported`` (the SDK's default) the store
refuses it and the command exits 1 with the store's error in one line and the Java trace in
``target/spark.log``, not on the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ProjectRun
from tests.integration.test_jdbc_catalog import add_catalog, cli
from tests.integration.test_s3_warehouse import (
    SECRET_ENV,
    bundle,
    rest_on_s3,
    s3_profile,
    write_project,
)
from tests.support.s3proxy_server import S3ProxyServer

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROWS = [(1, 3, "00123"), (2, 5, "04110")]


def test_first_write_lands_by_default_and_a_refused_one_says_why_in_one_line(
    tmp_path: Path, spark: Any, s3proxy_server: S3ProxyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3 = s3proxy_server
    monkeypatch.setenv(SECRET_ENV, s3.writer[1])
    server = rest_on_s3(tmp_path / "restck", s3)
    try:
        target = f"      catalog_type: rest\n      uri: {server.uri}\n"
        profile = s3_profile("restck", target, s3, s3.writer[0], [bundle()])
        root = write_project(tmp_path / "shop", profile)
        output = ProjectRun(root, spark, "analytics", "raw").manifest().output
        add_catalog(spark, output)
        spark.sql("CREATE NAMESPACE IF NOT EXISTS restck.raw")
        spark.sql("CREATE TABLE restck.raw.orders (customer_id int, order_count int, zip string)")
        csv = tmp_path / "orders-0.csv"
        csv.write_text(
            "customer_id,order_count,zip\n" + "".join(f"{a},{b},{c}\n" for a, b, c in ROWS)
        )
        env = {SECRET_ENV: s3.writer[1]}

        # the SDK's default checksums: refused by the store, said in one line
        (root / "profiles.yml").write_text(profile + "      s3_checksums: when_supported\n")
        done, _ = cli(root, env, "load", "raw.orders", str(csv))
        out = done.stdout + done.stderr
        assert done.returncode == 1, out
        errors = [line for line in out.splitlines() if "error" in line.lower()]
        assert errors and "x-amz-content-sha256" in errors[0], out
        assert not [line for line in out.splitlines() if line.strip().startswith("at ")], out
        # short: no Java trace (the progress heartbeat's lines, as many as Spark's start-up
        # took seconds on a loaded machine, are not the error's)
        said = [line for line in out.splitlines() if not line.startswith("... still working")]
        assert len(said) < 12, out
        log = root / "target" / "spark.log"
        assert str(log) in out
        assert "at software.amazon.awssdk" in log.read_text()
        assert s3.writer[1] not in out
        spark.catalog.refreshTable("restck.raw.orders")
        assert spark.table("restck.raw.orders").count() == 0

        # the documented profile (s3_endpoint, no s3_checksums): the same load lands
        (root / "profiles.yml").write_text(profile)
        done, seconds = cli(root, env, "load", "raw.orders", str(csv))
        assert done.returncode == 0, done.stdout + done.stderr
        spark.catalog.refreshTable("restck.raw.orders")
        rows = sorted(tuple(r) for r in spark.table("restck.raw.orders").collect())
        assert rows == ROWS
        print(f"\nrest+s3proxy: `lakewide load` (JVM start included) took {seconds:.1f} s")
    finally:
        server.stop()

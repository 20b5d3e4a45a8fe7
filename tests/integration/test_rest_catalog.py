"""The example's wide table on a REST catalog: Apache Iceberg's REST catalog test server
(tests/support/rest_server.py, one per module, SQLite-backed), Spark's Iceberg REST client from the
bundled runtime jar, pyiceberg's REST client for the JVM-free no-op run; bad URIs and
credentials fail before Spark with exit 2 and without the secret.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ProjectRun
from tests.integration.test_jdbc_catalog import (
    add_catalog,
    cli,
    copy_example_parts,
    no_java,
    table_rows,
)
from tests.support.project_factory import run_main
from tests.support.rest_server import RestServer, rest_classpath, start_rest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SECRET = "s3cr3t-rest-value"
ENV = {"LW_IT_REST_CREDENTIAL": f"lakewide-tests:{SECRET}"}
WIDE = "user_rec_wide"  # recommendations + impressions + clicks, keyed by (user_id, item_id)


@pytest.fixture(scope="module")
def rest_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestServer]:
    folder = tmp_path_factory.mktemp("rest")
    server = start_rest(folder, rest_classpath(folder), ENV["LW_IT_REST_CREDENTIAL"])
    yield server
    server.stop()


def rest_project(
    root: Path, uri: str, credential: str = "env_var('LW_IT_REST_CREDENTIAL')"
) -> Path:
    """A copy of the example whose profile's only target is a REST catalog."""
    copy_example_parts(root)
    (root / "profiles.yml").write_text(
        "lakewide_example:\n  target: team\n  outputs:\n    team:\n"
        "        master: local[2]\n        catalog: rest1\n        catalog_type: rest\n"
        f'        uri: "{uri}"\n        credential: "{{{{ {credential} }}}}"\n'
        "        namespace: analytics\n"
    )
    return root


def test_wide_table_on_rest_runs_incrementally_exact_and_noop_without_jvm(
    tmp_path: Path, spark: Any, rest_server: RestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    root = rest_project(tmp_path / "project", rest_server.uri)
    run = ProjectRun(root, spark, "analytics", "ods")
    add_catalog(spark, run.manifest().output)
    run.seed()
    assert run.run(WIDE)[WIDE].plan == "bootstrap"
    spark.sql(
        "INSERT INTO rest1.ods.clicks VALUES ('user_101', 'prod_501', 5), "
        "('user_105', 'prod_505', 1)"
    )
    assert run.run(WIDE)[WIDE].plan == "incremental"
    incremental = table_rows(spark, f"rest1.analytics.{WIDE}")
    assert any(r[0] == "user_105" for r in incremental)
    assert list(rest_server.warehouse.rglob("*.parquet"))  # the server's warehouse holds the data

    # the no-op run reads the tables through pyiceberg's REST client: no JVM (JAVA_HOME broken)
    done, seconds = cli(root, {**ENV, **no_java(tmp_path)}, "run", "--select", WIDE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Spark not started" in done.stdout
    results = json.loads((root / "target" / "run_results.json").read_text())
    assert results["spark_started"] is False
    assert SECRET not in done.stdout + done.stderr
    print(f"\nrest: no-op `lakewide run` without a JVM took {seconds:.2f} s (wall)")

    assert run.run(WIDE, full_refresh=True)[WIDE].plan == "full-refresh"
    assert table_rows(spark, f"rest1.analytics.{WIDE}") == incremental


CLOSED = "http://127.0.0.1:9"  # discard port: nothing listens


@pytest.mark.parametrize(
    ("command", "uri", "credential", "says"),
    [
        ("run", CLOSED, f"lakewide-tests:{SECRET}", ["did not answer", CLOSED, "uri"]),
        ("debug", CLOSED, f"lakewide-tests:{SECRET}", ["did not answer", CLOSED, "uri"]),
        ("run", CLOSED, SECRET, ["[lakewide_example.outputs.team.credential]", "CLIENT_ID:"]),
        ("run", "server", f"lakewide-tests:{SECRET}-wrong", ["invalid_client", "credential"]),
        ("debug", "server", f"lakewide-tests:{SECRET}-wrong", ["invalid_client", "credential"]),
    ],
    ids=["closed-run", "closed-debug", "malformed-credential", "wrong-run", "wrong-debug"],
)
def test_bad_uri_or_credential_exits_2_before_spark_without_the_secret(
    tmp_path: Path,
    rest_server: RestServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    uri: str,
    credential: str,
    says: list[str],
) -> None:
    monkeypatch.setenv("LW_IT_REST_CREDENTIAL", credential)
    if command == "run":  # a JVM start would fail (debug checks Java, then the endpoint)
        monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java-here"))
    root = rest_project(tmp_path / "project", rest_server.uri if uri == "server" else uri)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert code == 2, output
    assert "Traceback" not in output
    assert all(text in output for text in says), output
    assert SECRET not in output

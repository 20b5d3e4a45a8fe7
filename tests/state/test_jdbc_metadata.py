"""The JDBC catalog's metadata reader against the session's PostgreSQL server, without a JVM:
a database without catalog tables, a wrong password (told, never printed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from lakewide.project.nodes import Relation
from lakewide.project.profiles_file import load_output
from lakewide.state.jdbc_metadata import JdbcMetadataReader
from lakewide.vocabulary.errors import RuntimeSetupError
from tests.support.postgres_server import PostgresServer, missing_prerequisite
from tests.support.project_factory import make_project, run_main

#: the login as the profile's own keys, and as Iceberg's catalog properties (as Spark users
#: write them); lakewide's metadata reads take either, as Spark does
LOGINS = {
    "profile-keys": """\
      user: {user}
      password: "{{{{ env_var('LW_PW') }}}}"
""",
    "iceberg-properties": """\
      catalog_properties:
        jdbc.user: {user}
        jdbc.password: "{{{{ env_var('LW_PW') }}}}"
""",
}


@pytest.fixture(params=sorted(LOGINS))
def pg_project(
    tmp_path: Path,
    postgres_server: PostgresServer,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Path:
    if importlib.util.find_spec("psycopg2") is None:
        missing_prerequisite('psycopg2 missing: pip install -e ".[test]"')
    database = postgres_server.create_database(f"reader_{tmp_path.name.replace('-', '_')}")
    monkeypatch.setenv("LW_PW", postgres_server.password)
    profile = f"""\
demo:
  target: pg
  outputs:
    pg:
      catalog: team
      catalog_type: jdbc
      uri: {postgres_server.jdbc_uri(database)}
      warehouse: wh
"""
    profile += LOGINS[request.param].format(user=postgres_server.user)
    return make_project(tmp_path, {"models/m.sql": "SELECT 1 AS id", "profiles.yml": profile})


def test_database_without_catalog_tables_has_no_tables(pg_project: Path) -> None:
    output = load_output(pg_project / "profiles.yml", "demo", project_root=pg_project)
    reader = JdbcMetadataReader(output)
    assert reader.table_meta(Relation("team", "analytics", "m")) is None
    reader.close()


def test_wrong_password_is_told_and_never_printed(
    pg_project: Path,
    postgres_server: PostgresServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong = "Wr0ng-pa55word"
    monkeypatch.setenv("LW_PW", wrong)
    output = load_output(pg_project / "profiles.yml", "demo", project_root=pg_project)
    with pytest.raises(RuntimeSetupError, match="its database did not answer") as caught:
        JdbcMetadataReader(output).table_meta(Relation("team", "analytics", "m"))
    assert "password authentication failed" in caught.value.message
    assert wrong not in str(caught.value)
    monkeypatch.setenv("JAVA_HOME", str(pg_project / "no-java"))  # a JVM start would fail
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(pg_project), "lineage", "m")
    assert code == 2, out
    assert "check the profile's uri, user and password" in out
    assert wrong not in out and postgres_server.password not in out

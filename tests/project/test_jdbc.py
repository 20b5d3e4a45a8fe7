"""JDBC catalog profiles without a JVM: keys -> Spark properties, driver jars, the URI mapping
for the metadata reader, and bad inputs (clear ConfigErrors that never print the password)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from lakewide.project.jdbc import DATABASES, driver_jars, libpq_uri, sqlalchemy_url, sqlite_file
from lakewide.project.profiles_file import load_output
from lakewide.spark.runtime import spark_conf
from lakewide.state.lock import lock_path
from lakewide.state.readers import metadata_reader
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project, run_main

REPO = Path(__file__).resolve().parents[2]
SECRET = "S3cr3t-pw:@/?"

PG_PROFILE = """\
demo:
  target: pg
  outputs:
    dev:
      catalog: lw
      catalog_type: hadoop
    pg:
      catalog: team
      catalog_type: jdbc
      uri: "jdbc:postgresql://db.example:5433/lake"
      user: "{{ env_var('LW_PG_USER') }}"
      password: "{{ env_var('LW_PG_PASSWORD') }}"
      warehouse: shared/wh
      namespace: analytics
"""


@pytest.fixture
def pg_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LW_PG_USER", "lake user")
    monkeypatch.setenv("LW_PG_PASSWORD", SECRET)


def _output(root: Path, target: str | None = None):  # type: ignore[no-untyped-def]
    return load_output(root / "profiles.yml", "demo", target, project_root=root)


def test_profile_keys_map_to_spark_catalog_properties(tmp_path: Path, pg_env: None) -> None:
    root = make_project(tmp_path, {"profiles.yml": PG_PROFILE})
    output = _output(root)
    assert output.iceberg_catalog_properties() == {
        "catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        "jdbc.schema-version": "V1",
        "warehouse": str((root / "shared/wh").resolve()),
        "uri": "jdbc:postgresql://db.example:5433/lake",
        "jdbc.user": "lake user",
    }
    # the password is set on the running session only, never on spark-submit's command line
    assert output.catalog_secrets() == {"jdbc.password": SECRET}
    assert SECRET not in repr(output) and SECRET not in str(output.model_dump())
    assert lock_path(output) is None  # JDBC catalogs arbitrate commits: no warehouse lock


def test_catalog_properties_override_the_schema_version(tmp_path: Path, pg_env: None) -> None:
    profile = PG_PROFILE + "      catalog_properties:\n        jdbc.schema-version: V0\n"
    output = _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert output.iceberg_catalog_properties()["jdbc.schema-version"] == "V0"


def test_unset_password_fails_only_in_its_target_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LW_PG_USER", raising=False)
    monkeypatch.delenv("LW_PG_PASSWORD", raising=False)
    root = make_project(tmp_path, {"profiles.yml": PG_PROFILE})
    assert _output(root, "dev").catalog_type == "hadoop"  # the other target still loads
    with pytest.raises(ConfigError) as caught:
        _output(root)
    assert caught.value.key == "demo.outputs.pg.user"
    assert "LW_PG_USER is not set" in caught.value.message
    monkeypatch.setenv("LW_PG_USER", "u")
    with pytest.raises(ConfigError) as caught:
        _output(root)
    assert caught.value.key == "demo.outputs.pg.password"
    assert "env_var('LW_PG_PASSWORD', '<default>')" in caught.value.message


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("jdbc:mysql://h/db", "unsupported JDBC catalog database ('mysql')"),
        ("postgresql://h/db", "unsupported JDBC catalog database (not a jdbc: URI)"),
        ("jdbc:sqlite::memory:", "a SQLite catalog needs a file"),
    ],
)
def test_bad_uri_names_the_key_not_the_secret(
    tmp_path: Path, pg_env: None, uri: str, expected: str
) -> None:
    profile = PG_PROFILE.replace(
        "jdbc:postgresql://db.example:5433/lake", uri + "?password={{ env_var('LW_PG_PASSWORD') }}"
    )
    with pytest.raises(ConfigError) as caught:
        _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert caught.value.key == "demo.outputs.pg.uri"
    assert expected in caught.value.message
    assert "jdbc:sqlite:/path/to/catalog.db" in caught.value.message
    assert SECRET not in str(caught.value)


def test_jdbc_needs_a_warehouse(tmp_path: Path, pg_env: None) -> None:
    profile = PG_PROFILE.replace("      warehouse: shared/wh\n", "")
    with pytest.raises(ConfigError, match="catalog_type jdbc needs `warehouse`") as caught:
        _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert caught.value.key == "demo.outputs.pg.warehouse"


def test_driver_jar_from_the_profile_else_debian(tmp_path: Path, pg_env: None) -> None:
    jar = tmp_path / "driver.jar"
    jar.write_bytes(b"PK")
    root = make_project(tmp_path, {"profiles.yml": PG_PROFILE + f"      jars: ['{jar}']\n"})
    assert driver_jars(_output(root)) == [jar.resolve()]
    missing = tmp_path / "nope.jar"
    (root / "profiles.yml").write_text(PG_PROFILE + f"      jars: ['{jar}', '{missing}']\n")
    with pytest.raises(ConfigError, match="does not exist") as caught:
        driver_jars(_output(root))
    assert caught.value.key == "demo.outputs.pg.jars[1]"


def test_missing_debian_driver_says_what_to_install(
    tmp_path: Path, pg_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = dataclasses.replace(DATABASES["postgresql"], debian_jar=tmp_path / "postgresql.jar")
    monkeypatch.setitem(DATABASES, "postgresql", gone)
    output = _output(make_project(tmp_path, {"profiles.yml": PG_PROFILE}))
    with pytest.raises(ConfigError) as caught:
        driver_jars(output)
    assert "apt-get install libpostgresql-jdbc-java" in caught.value.message
    assert "`jars:`" in caught.value.message


def test_missing_driver_stops_the_cli_before_spark(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("LW_PG_USER", "u")
    monkeypatch.setenv("LW_PG_PASSWORD", SECRET)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))  # any JVM start would fail
    profile = PG_PROFILE + f"      jars: ['{tmp_path / 'postgresql.jar'}']\n"
    root = make_project(tmp_path, {"models/m.sql": "SELECT 1 AS id", "profiles.yml": profile})
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert code == 2, out
    assert "profiles.yml" in out and "jars[0]" in out and "does not exist" in out
    assert "Traceback" not in out and SECRET not in out


@pytest.mark.parametrize(
    ("uri", "libpq"),
    [
        ("jdbc:postgresql://h:5433/lake", "postgresql://lake%20user:{pw}@h:5433/lake"),
        ("jdbc:postgresql://h/lake", "postgresql://lake%20user:{pw}@h/lake"),
        ("jdbc:postgresql:lake", "postgresql://lake%20user:{pw}@localhost/lake"),
        ("jdbc:postgresql://h1:1,h2:2/lake", "postgresql://lake%20user:{pw}@h1:1,h2:2/lake"),
        (
            "jdbc:postgresql://h/lake?ssl=true&currentSchema=cat&prepareThreshold=0",
            "postgresql://lake%20user:{pw}@h/lake?sslmode=require&options=-csearch_path%3Dcat",
        ),
        (
            "jdbc:postgresql://h/lake?sslmode=verify-full&connectTimeout=5",
            "postgresql://lake%20user:{pw}@h/lake?sslmode=verify-full&connect_timeout=5",
        ),
    ],
)
def test_jdbc_uri_to_libpq(tmp_path: Path, pg_env: None, uri: str, libpq: str) -> None:
    profile = PG_PROFILE.replace("jdbc:postgresql://db.example:5433/lake", uri)
    output = _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert libpq_uri(output) == libpq.format(pw="S3cr3t-pw%3A%40%2F%3F")


def test_user_and_password_from_the_uri(tmp_path: Path) -> None:
    profile = PG_PROFILE.replace(
        "jdbc:postgresql://db.example:5433/lake", "jdbc:postgresql://h/db?user=u&password=p"
    )
    profile = "\n".join(line for line in profile.splitlines() if "env_var" not in line)
    output = _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert libpq_uri(output) == "postgresql://u:p@h/db"
    assert sqlalchemy_url(output) == "postgresql+psycopg2://u:p@h/db"


def test_sqlite_file_resolves_against_the_project(tmp_path: Path, pg_env: None) -> None:
    profile = PG_PROFILE.replace("jdbc:postgresql://db.example:5433/lake", "jdbc:sqlite:cat.db")
    root = make_project(tmp_path, {"profiles.yml": profile})
    output = _output(root)
    assert output.uri == f"jdbc:sqlite:{(root / 'cat.db').resolve()}"
    assert sqlite_file(output) == (root / "cat.db").resolve()
    assert sqlalchemy_url(output) == f"sqlite:///{(root / 'cat.db').resolve()}"
    assert metadata_reader(output) is not None  # read without Spark
    # no catalog file yet: no table exists (Spark creates the file on first use)
    from lakewide.project.nodes import Relation

    reader = metadata_reader(output)
    assert reader is not None and reader.table_meta(Relation("team", "a", "t")) is None


def test_driver_classpath_keeps_the_bundled_jars_and_the_profiles_own(tmp_path: Path) -> None:
    driver = tmp_path / "postgresql.jar"
    plain = spark_conf("local[2]", "c", {}, {})
    conf = spark_conf("local[2]", "c", {}, {}, driver_classpath=[driver])
    assert conf["spark.jars"] == plain["spark.jars"]
    assert conf["spark.driver.extraClassPath"] == str(driver)
    theirs = {"spark.driver.extraClassPath": "/opt/x.jar"}
    conf = spark_conf("local[2]", "c", {}, theirs, driver_classpath=[driver])
    assert conf["spark.driver.extraClassPath"] == f"/opt/x.jar{os.pathsep}{driver}"


@pytest.mark.parametrize("target", ["dev", "pg", "sqlite"])
def test_repository_profiles_render_without_environment(
    monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    for name in list(os.environ):
        if name.startswith("LAKEWIDE_"):
            monkeypatch.delenv(name)
    output = load_output(REPO / "profiles.yml", "lakewide_example", target, project_root=REPO)
    assert output.catalog_type == ("hadoop" if target == "dev" else "jdbc")


def test_login_keys_belong_to_jdbc_catalogs(tmp_path: Path, pg_env: None) -> None:
    profile = PG_PROFILE.replace("catalog_type: hadoop", "catalog_type: hadoop\n      user: x")
    root = make_project(tmp_path, {"profiles.yml": profile})
    with pytest.raises(ConfigError, match="database login of a JDBC catalog") as caught:
        _output(root, "dev")
    assert caught.value.key == "demo.outputs.dev.user"


def test_login_as_iceberg_catalog_properties(tmp_path: Path) -> None:
    """``jdbc.user``/``jdbc.password`` in catalog_properties (Iceberg's own names, which Spark
    reads) log lakewide's metadata reads in too."""
    profile = PG_PROFILE.replace(
        "      user: \"{{ env_var('LW_PG_USER') }}\"\n"
        "      password: \"{{ env_var('LW_PG_PASSWORD') }}\"\n",
        "      catalog_properties: {jdbc.user: u, jdbc.password: 'p@ss'}\n",
    )
    output = _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert libpq_uri(output) == "postgresql://u:p%40ss@db.example:5433/lake"
    assert sqlalchemy_url(output) == "postgresql+psycopg2://u:p%40ss@db.example:5433/lake"


@pytest.mark.parametrize("key", ["user", "password"])
def test_login_given_twice_is_refused(tmp_path: Path, pg_env: None, key: str) -> None:
    profile = PG_PROFILE + f"      catalog_properties: {{jdbc.{key}: other}}\n"
    with pytest.raises(
        ConfigError, match=f"given twice, as `{key}` and as catalog_properties"
    ) as e:
        _output(make_project(tmp_path, {"profiles.yml": profile}))
    assert e.value.key == f"demo.outputs.pg.catalog_properties.jdbc.{key}"
    assert "other" not in str(e.value)

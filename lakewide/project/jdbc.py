"""JDBC catalogs (Iceberg's JdbcCatalog): the databases lakewide takes, their driver jars, and
the SQLAlchemy URL with which pyiceberg's SQL catalog reads the same catalog tables.

No pyspark and no SQLAlchemy here: a profile is checked without either. A profile's
``password`` is never put in a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urlencode

if TYPE_CHECKING:
    from lakewide.project.profiles import Output


@dataclass(frozen=True)
class Database:
    """A database a JDBC catalog can live in, and what lakewide needs to reach it."""

    title: str
    uri_form: str
    debian_jar: Path
    apt_package: str
    pip_extra: str


DATABASES = {
    "postgresql": Database(
        "PostgreSQL",
        "jdbc:postgresql://HOST[:PORT]/DATABASE",
        Path("/usr/share/java/postgresql.jar"),
        "libpostgresql-jdbc-java",
        "sql-postgres",
    ),
    "sqlite": Database(
        "SQLite",
        "jdbc:sqlite:/path/to/catalog.db",
        Path("/usr/share/java/sqlite-jdbc.jar"),
        "libxerial-sqlite-jdbc-java",
        "sql-sqlite",
    ),
}
ACCEPTED_URIS = " or ".join(d.uri_form for d in DATABASES.values())
# JDBC URL parameters of the PostgreSQL driver that libpq (psycopg2) takes too, by libpq name.
_PG_PARAMETERS = {
    "sslmode": "sslmode",
    "sslrootcert": "sslrootcert",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "connectTimeout": "connect_timeout",
    "ApplicationName": "application_name",
}


def database_kind(uri: str | None) -> str | None:
    """``postgresql`` for ``jdbc:postgresql://...``; None when not a JDBC URI."""
    if not uri or not uri.startswith("jdbc:"):
        return None
    return uri[len("jdbc:") :].split(":", 1)[0].lower()


def check_jdbc(output: Output, root: Path) -> None:
    """A JDBC output's ``uri`` and ``warehouse``, checked and made absolute (ConfigError).

    A relative SQLite file and a relative local warehouse resolve against the project ``root``.
    The URI is never echoed: it may hold a password.
    """
    kind = database_kind(output.uri)
    if output.uri is None:
        raise output.config_error(f"catalog_type jdbc needs `uri`: {ACCEPTED_URIS}", "uri")
    if kind not in DATABASES:
        found = f"'{kind}'" if kind else "not a jdbc: URI"
        raise output.config_error(
            f"unsupported JDBC catalog database ({found}); accepted: {ACCEPTED_URIS}", "uri"
        )
    _check_login_once(output)
    if kind == "sqlite":
        output.uri = "jdbc:sqlite:" + str(_sqlite_file(output, root))  # parameters dropped
    if not output.warehouse:
        raise output.config_error(
            "catalog_type jdbc needs `warehouse`: where the tables' data and metadata files go "
            "(a folder every writer reaches, e.g. /shared/warehouse or s3://bucket/warehouse; "
            "a relative path resolves against the project)",
            "warehouse",
        )
    if "://" not in output.warehouse and not output.warehouse.startswith("file:"):
        output.warehouse = str((root / output.warehouse).resolve())


def _sqlite_file(output: Output, root: Path) -> Path:
    """The catalog file of ``jdbc:sqlite:[file:]PATH[?params]``, absolute."""
    path = str(sqlite_file(output))
    if path in ("", ".", ":memory:") or path.startswith(":"):
        raise output.config_error(
            "a SQLite catalog needs a file (jdbc:sqlite:/path/to/catalog.db): an in-memory "
            "database is not shared between Spark and lakewide's metadata reads",
            "uri",
        )
    return (root / path).resolve()


def driver_jars(output: Output) -> list[Path]:
    """Jars Spark's driver needs for ``output``: the profile's ``jars:`` (each must exist),
    else, for a JDBC catalog, the Debian package's driver jar (ConfigError when missing); an S3
    warehouse needs Iceberg's AWS bundle among them (ConfigError when none is listed)."""
    jars = [Path(j).expanduser() for j in output.jars]
    for index, jar in enumerate(jars):
        if not jar.is_file():
            raise output.config_error(
                f"jar {jar} does not exist (list existing .jar files)", f"jars[{index}]"
            )
    _check_aws_bundle(output, jars)
    if jars:
        return [j.resolve() for j in jars]
    kind = database_kind(output.uri) if output.catalog_type == "jdbc" else None
    database = DATABASES.get(kind or "")
    if database is None:
        return []
    if not database.debian_jar.is_file():
        raise output.config_error(
            f"the {database.title} JDBC driver is not installed: `apt-get install "
            f"{database.apt_package}` (it installs {database.debian_jar}), or list the driver "
            "jar under the output's `jars:` key",
            "uri",
        )
    return [database.debian_jar]


AWS_BUNDLE = "org.apache.iceberg:iceberg-aws-bundle"


def _check_aws_bundle(output: Output, jars: list[Path]) -> None:
    """Iceberg's S3FileIO needs the AWS SDK (``iceberg-aws-bundle``) on Spark's classpath: a
    ConfigError before Spark when a profile on S3 lists no such jar (nor a spark_conf of jars)."""
    if not output.uses_s3():
        return
    named = [j.name for j in jars] + [
        output.spark_conf.get(key, "")
        for key in ("spark.jars", "spark.jars.packages", "spark.driver.extraClassPath")
    ]
    if not any("aws" in name for name in named):
        raise output.config_error(
            "tables on S3 need Iceberg's AWS SDK bundle on Spark's classpath: list "
            f"iceberg-aws-bundle-<version>.jar under `jars:` (Maven Central {AWS_BUNDLE}, "
            "e.g. `mvn dependency:get -Dartifact=" + AWS_BUNDLE + ":1.10.1` puts it in ~/.m2)",
            "jars",
        )


#: Iceberg's own names of the JDBC catalog's login, as Spark users write them in
#: catalog_properties; the profile's ``user``/``password`` keys are the same settings
LOGIN_PROPERTIES = {"user": "jdbc.user", "password": "jdbc.password"}


def login(output: Output) -> tuple[str | None, str | None]:
    """The JDBC catalog's user and password: the profile's ``user``/``password``, or
    Iceberg's ``jdbc.user``/``jdbc.password`` in ``catalog_properties`` (Spark reads either;
    so do lakewide's metadata reads)."""
    user = output.user or output.catalog_properties.get(LOGIN_PROPERTIES["user"])
    password = (
        output.password.get_secret_value()
        if output.password
        else output.catalog_properties.get(LOGIN_PROPERTIES["password"])
    )
    return user, password


def _check_login_once(output: Output) -> None:
    """The login given once: ``user`` and ``catalog_properties: {jdbc.user: ...}`` together
    would be two values of one setting (ConfigError naming the key)."""
    for key, name in LOGIN_PROPERTIES.items():
        if getattr(output, key) is not None and name in output.catalog_properties:
            raise output.config_error(
                f"the catalog's {key} is given twice, as `{key}` and as catalog_properties "
                f"`{name}`: keep one (either works, in Spark and in lakewide's metadata reads)",
                f"catalog_properties.{name}",
            )


def sqlite_file(output: Output) -> Path:
    """The catalog file of a ``jdbc:sqlite:`` output (absolute after check_jdbc)."""
    assert output.uri is not None
    path = output.uri[len("jdbc:sqlite:") :].split("?", 1)[0]
    return Path(path[len("file:") :] if path.startswith("file:") else path)


def libpq_uri(output: Output) -> str:
    """The libpq connection URI of a ``jdbc:postgresql:`` output (psycopg2 takes it).

    ``jdbc:postgresql://HOST[:PORT][,HOST:PORT...]/DB?params`` becomes
    ``postgresql://USER:PASSWORD@HOST[:PORT][,...]/DB``: user and password from the profile,
    else the URI's ``user``/``password`` parameters; the parameters libpq knows too
    (``sslmode``, ``sslrootcert``, ``sslcert``, ``sslkey``, ``connectTimeout``,
    ``ApplicationName``, ``ssl=true``, ``currentSchema``) carried over, the others (driver
    tuning) dropped. ``jdbc:postgresql:DB`` is DB on localhost.
    """
    assert output.uri is not None and database_kind(output.uri) == "postgresql"
    where, _, query = output.uri[len("jdbc:postgresql:") :].partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if where.startswith("//"):
        hosts, _, database = where[2:].partition("/")
    else:  # jdbc:postgresql:DB, jdbc:postgresql:/ - the local server
        hosts, database = "", where.lstrip("/")
    profile_user, profile_password = login(output)
    user = profile_user or params.get("user", "")
    password = profile_password or params.get("password")
    auth = quote(user, safe="")
    if password:
        auth += ":" + quote(password, safe="")
    carried = {_PG_PARAMETERS[k]: v for k, v in params.items() if k in _PG_PARAMETERS}
    if "sslmode" not in carried and params.get("ssl", "").lower() == "true":
        carried["sslmode"] = "require"
    if params.get("currentSchema"):
        carried["options"] = f"-csearch_path={params['currentSchema']}"
    url = f"postgresql://{auth}@{hosts or 'localhost'}/{quote(database, safe='')}"
    return url + ("?" + urlencode(carried) if carried else "")


def sqlalchemy_url(output: Output) -> str:
    """The SQLAlchemy URL of a JDBC output's database: what pyiceberg's SQL catalog
    (``load_catalog(name, type="sql", uri=...)``) takes to read the same catalog tables.
    ``postgresql+psycopg2://...`` (one host only), ``sqlite:////path/catalog.db``."""
    if database_kind(output.uri) == "sqlite":
        return f"sqlite:///{sqlite_file(output)}"
    return "postgresql+psycopg2" + libpq_uri(output)[len("postgresql") :]

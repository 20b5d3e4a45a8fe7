"""dbt-style ``profiles.yml``: profile -> target -> output with Spark and Iceberg settings."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    SecretStr,
    field_validator,
)

from lakewide.project.branch_name import check_branch_name
from lakewide.project.durations import parse_retention
from lakewide.vocabulary.errors import ConfigError

CatalogType = Literal["hadoop", "rest", "hive", "jdbc"]
MASTER_FORMS = (
    "local, local[N], local[*], local[N,F], local-cluster[N,C,M], "
    "spark://HOST:PORT[,HOST:PORT...], yarn, k8s://[https://]HOST[:PORT], "
    "mesos://HOST:PORT"
)
_MASTER_PATTERNS = (
    r"local",
    r"local\[(?:[1-9][0-9]*|\*)\]",
    r"local\[\s*(?:[1-9][0-9]*|\*)\s*,\s*[0-9]+\s*\]",
    r"local-cluster\[\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*\]",
    r"spark://[^\s:/,]+:[0-9]+(?:,[^\s:/,]+:[0-9]+)*",
    r"yarn",
    r"k8s://(?:https?://)?[^\s:/]+(?::[0-9]+)?/?",
    r"mesos://[^\s:/]+:[0-9]+",
)


CATALOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
#: the AWS SDK v2's system properties for its checksums (Output.s3_java_options)
S3_CHECKSUM_PROPERTIES = ("aws.requestChecksumCalculation", "aws.responseChecksumValidation")


class Output(BaseModel):
    """One target's connection: where Spark runs and which Iceberg catalog it writes."""

    model_config = ConfigDict(extra="forbid")

    master: str = "local[*]"
    # a Spark Connect server instead of a local/cluster Spark (lakewide.project.connect); the
    # token through env_var(), never printed
    connect_url: str | None = None
    connect_token: SecretStr | None = None
    connect_use_ssl: bool | None = None
    catalog: str = "lakewide"
    catalog_type: CatalogType = "hadoop"
    warehouse: str | None = None
    uri: str | None = None
    # jdbc: the database login (through env_var(); the password is never printed)
    user: str | None = None
    password: SecretStr | None = None
    # rest: OAuth2 client credentials ``id:secret`` or a bearer token (through env_var())
    credential: SecretStr | None = None
    token: SecretStr | None = None
    jars: list[str] = []  # extra jars on Spark's driver classpath (a JDBC driver)
    namespace: str = "default"
    # object storage (Iceberg's S3FileIO, for Spark and the JVM-free metadata reads); the
    # secret through env_var(), never printed
    s3_endpoint: str | None = None
    s3_region: str | None = None
    s3_path_style_access: bool | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = None
    # when the AWS SDK computes and checks checksums (None: when_required with s3_endpoint,
    # which S3-compatible stores need, else the SDK's own default, when_supported)
    s3_checksums: Literal["when_required", "when_supported"] | None = None
    catalog_properties: dict[str, str] = {}
    spark_conf: dict[str, str] = {}
    # run/build tag their consistent snapshots (lakewide.state.tags), kept this long
    run_tags: bool = True
    tag_retention: str = "7 days"
    # an environment: run/build write every model to this Iceberg branch of its table
    # (lakewide.state.branches); `lakewide publish` moves main to it
    branch: str | None = None
    # Where these settings were read: (profiles.yml path, "profile.outputs.target").
    _origin: tuple[str, str] = PrivateAttr(default=("profiles.yml", "outputs.<target>"))

    @field_validator("catalog")
    @classmethod
    def _catalog_name(cls, value: str) -> str:
        if not CATALOG_NAME.fullmatch(value):
            raise ValueError(
                f"invalid catalog name {value!r}: use letters, digits and _, not starting "
                "with a digit (Spark's name of the Iceberg catalog, e.g. lw)"
            )
        return value

    @field_validator("branch")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        return None if value is None else check_branch_name(value)

    @field_validator("tag_retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        parse_retention(value)  # ValueError says what is accepted
        return value

    @property
    def target_name(self) -> str | None:
        """The profile target these settings were read from (None when not read from one)."""
        name = self._origin[1].rsplit(".", 1)[-1]
        return None if name == "<target>" else name

    def config_error(self, message: str, key: str) -> ConfigError:
        """A ConfigError naming the profiles.yml these settings came from and ``key`` in it."""
        path, prefix = self._origin
        return ConfigError(message, path=path, key=f"{prefix}.{key}")

    def iceberg_catalog_properties(self) -> dict[str, str]:
        """Properties of ``spark.sql.catalog.<catalog>.*`` for this output."""
        props: dict[str, str] = {}
        if self.catalog_type == "jdbc":
            props["catalog-impl"] = "org.apache.iceberg.jdbc.JdbcCatalog"
            props["jdbc.schema-version"] = "V1"  # V0 catalog tables cannot hold views
        else:
            props["type"] = self.catalog_type
        if self.warehouse:
            props["warehouse"] = self.warehouse
        if self.uri:
            props["uri"] = self.uri
        if self.user is not None:
            props["jdbc.user"] = self.user
        props.update(self.s3_properties())
        props.update(self.catalog_properties)
        return props

    def uses_s3(self) -> bool:
        """Whether tables live on S3: an ``s3://`` warehouse or any ``s3_*`` key set."""
        keys = (self.s3_endpoint, self.s3_region, self.s3_access_key_id, self.s3_secret_access_key)
        warehouse = (self.warehouse or "").lower()
        return warehouse.startswith("s3://") or any(k is not None for k in keys)

    def s3_properties(self) -> dict[str, str]:
        """Iceberg catalog properties of the ``s3_*`` keys (the secret is in catalog_secrets):
        ``io-impl`` S3FileIO, ``s3.endpoint``, ``s3.path-style-access``, ``s3.access-key-id``,
        ``client.region`` (us-east-1 when an endpoint is set without a region)."""
        if not self.uses_s3():
            return {}
        props = {"io-impl": S3_FILE_IO}
        region = self.s3_region or ("us-east-1" if self.s3_endpoint else None)
        named = {
            "s3.endpoint": self.s3_endpoint,
            "s3.access-key-id": self.s3_access_key_id,
            "client.region": region,
        }
        props.update({key: value for key, value in named.items() if value})
        if self.s3_path_style_access is not None:
            props["s3.path-style-access"] = str(self.s3_path_style_access).lower()
        return props

    def s3_java_options(self) -> list[str]:
        """JVM system properties for the AWS SDK v2 of Iceberg's S3FileIO: its request
        checksums and response checksum checks (``s3_checksums``; by default ``when_required``
        when ``s3_endpoint`` names an S3-compatible store: since SDK 2.30 the SDK sends an
        ``aws-chunked`` upload with a trailing checksum on every write, which many such stores
        reject). S3FileIO (Iceberg 1.10) has no property for these; the SDK reads them from
        ``aws.requestChecksumCalculation`` and ``aws.responseChecksumValidation``."""
        mode = self.s3_checksums or ("when_required" if self.s3_endpoint else None)
        if mode is None:
            return []
        return [f"-D{name}={mode.upper()}" for name in S3_CHECKSUM_PROPERTIES]

    def catalog_secrets(self) -> dict[str, str]:
        """Properties of ``spark.sql.catalog.<catalog>.*`` set only once Spark runs (never on
        the JVM's command line, where ``ps`` would show them): the JDBC password, the REST
        catalog's ``credential`` and ``token``."""
        secrets = {
            "jdbc.password": self.password,
            "credential": self.credential,
            "token": self.token,
            "s3.secret-access-key": self.s3_secret_access_key,
        }
        return {key: value.get_secret_value() for key, value in secrets.items() if value}

    def secret_values(self) -> list[str]:
        """The secrets of this output as text, to mask wherever a message might echo them."""
        found = [v for v in self.catalog_secrets().values() if v]
        if self.connect_token is not None and self.connect_token.get_secret_value():
            found.append(self.connect_token.get_secret_value())
        # a credential's secret part (after the client id, which is not secret) on its own
        found += [v.split(":", 1)[1] for v in found if ":" in v and v.split(":", 1)[1]]
        return found

    def masked(self, text: str) -> str:
        """``text`` with every secret of this output replaced by ``***``."""
        for secret in self.secret_values():
            text = text.replace(secret, "***")
        return text


def check_rest(output: Output) -> None:
    """A REST catalog needs ``uri``: its ``http(s)://`` endpoint (ConfigError, exit 2)."""
    if not output.uri:
        raise output.config_error(
            "catalog_type rest needs `uri`: the catalog's endpoint, e.g. "
            "http://localhost:8181 (Polaris: https://HOST/api/catalog)",
            "uri",
        )
    if urlsplit(output.uri).scheme.lower() not in ("http", "https") or "://" not in output.uri:
        raise output.config_error(
            "a REST catalog's `uri` must start with http:// or https:// (the catalog's endpoint)",
            "uri",
        )
    if output.credential and ":" not in output.credential.get_secret_value():
        raise output.config_error(
            "`credential` is OAuth2 client credentials `CLIENT_ID:CLIENT_SECRET` (one colon); "
            "a bearer token goes in `token`",
            "credential",
        )


def check_master(output: Output) -> None:
    """Refuse a ``master`` Spark would reject, before any JVM starts (ConfigError, exit 2)."""
    if any(re.fullmatch(pattern, output.master) for pattern in _MASTER_PATTERNS):
        return
    # The value is not echoed: it may come from env_var() (error messages never show those).
    raise output.config_error(
        f"not a Spark master URL; accepted: {MASTER_FORMS} (N threads >= 1, F max failures)",
        "master",
    )


def check_warehouse_writable(output: Output) -> None:
    """A local hadoop warehouse must be a folder lakewide can create and write (ConfigError).

    Checked before the warehouse lock is taken or Spark starts; remote warehouses (``s3://``)
    and other catalogs are left to the catalog.
    """
    folder = warehouse_path(output.warehouse) if output.catalog_type == "hadoop" else None
    if folder is None:
        return
    problem = _unwritable(folder)
    if problem:
        raise output.config_error(
            f"warehouse {folder} cannot be written: {problem}; set "
            "`warehouse` to a folder you can write (a path relative to "
            "the project is fine)",
            "warehouse",
        )


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold a warehouse, or None; creates it when missing."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".lakewide-write-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        return f"{err.strerror or err} ({err.filename or existing})"
    return None


def warehouse_path(warehouse: str | None) -> Path | None:
    """A hadoop warehouse as a local folder: plain paths and ``file:`` URIs; None otherwise.

    ``file:///data/wh``, ``file:/data/wh`` and ``file://localhost/data/wh`` are the folder
    ``/data/wh`` (percent-escapes decoded); ``s3://...``, ``hdfs://...`` are not local.
    """
    if not warehouse:
        return None
    if "://" not in warehouse and not warehouse.startswith("file:"):
        return Path(warehouse)
    parts = urlsplit(warehouse)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))

"""A profile output naming a Spark Connect server (``connect_url``): its checks, made before
anything connects (ConfigError naming profiles.yml and the key, exit 2).

In Connect mode lakewide is a pure-Python client: Spark, its jars and the Iceberg runtime run on
the server; lakewide reads table metadata itself (pyiceberg and lakewide.state), so the catalog
must be one it reads without a JVM, at the same place the server sees it.
"""

from __future__ import annotations

import re

from lakewide.project.profiles import Output, warehouse_path

CONNECT_FORM = "sc://HOST:PORT, optionally followed by /;use_ssl=true;user_id=NAME"
_URL = re.compile(r"sc://(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?(?:/(;[^;\s]+)*)?")
_PARAMS = ("use_ssl", "user_id", "user_agent", "session_id")
#: keys of an output that configure a local or cluster Spark, which a Connect server has already
_SERVER_SIDE = ("master", "jars")


def check_connect(output: Output) -> None:
    """Refuse a Connect output lakewide cannot run against (see the module docstring)."""
    url = output.connect_url
    if url is None:
        for key in ("connect_token", "connect_use_ssl"):
            if getattr(output, key) is not None:
                raise output.config_error(
                    f"`{key}` is an option of a Spark Connect server: set `connect_url` "
                    f"({CONNECT_FORM}) or remove `{key}`",
                    key,
                )
        return
    # the URL is not echoed: it may come from env_var() (error messages never show those)
    if not _URL.fullmatch(url):
        raise output.config_error(
            f"not a Spark Connect address; accepted: {CONNECT_FORM}", "connect_url"
        )
    for param in url.split("/", 3)[-1].split(";")[1:] if url.count("/") > 2 else []:
        name = param.split("=", 1)[0]
        if name == "token":
            raise output.config_error(
                "the token does not go in `connect_url` (it would be shown wherever the URL "
                "is): set `connect_token: \"{{ env_var('SPARK_CONNECT_TOKEN') }}\"`",
                "connect_url",
            )
        if name not in _PARAMS:
            raise output.config_error(
                f"unknown Spark Connect parameter {name!r}; accepted: {', '.join(_PARAMS)} "
                "(the token through `connect_token`, TLS through `connect_use_ssl`)",
                "connect_url",
            )
    for key in _SERVER_SIDE:
        if key in output.model_fields_set:
            raise output.config_error(
                f"`{key}` configures a Spark lakewide starts itself; with `connect_url` Spark "
                f"runs on the Connect server (its own master and jars): remove `{key}`",
                key,
            )
    local = output.catalog_type != "hadoop" or warehouse_path(output.warehouse) is not None
    if output.catalog_type == "hive" or not local:
        raise output.config_error(
            "over Spark Connect lakewide reads table metadata without Spark: use a rest or "
            "jdbc catalog, or a hadoop warehouse on a local folder the server sees at the same "
            f"path (this output: catalog_type {output.catalog_type})",
            "catalog_type",
        )


def server_address(output: Output) -> str:
    """``connect_url`` without its parameters (which may hold a token): what messages show."""
    return (output.connect_url or "").split("/;")[0]


def server_host_port(output: Output) -> tuple[str, int]:
    """The host and port ``connect_url`` names (Spark Connect's 15002 when it names none)."""
    host_port = server_address(output).removeprefix("sc://").split("/")[0]
    host, _, port = host_port.rpartition(":") if ":" in host_port else (host_port, "", "15002")
    return host.strip("[]"), int(port)


def connect_address(output: Output) -> str:
    """The address the Connect client dials: ``connect_url`` with the token and TLS options
    added (a secret: never printed, never logged)."""
    url = output.connect_url or ""
    params = []
    if output.connect_use_ssl is not None:
        params.append(f"use_ssl={str(output.connect_use_ssl).lower()}")
    if output.connect_token is not None:
        params.append("token=" + output.connect_token.get_secret_value())
    if not params:
        return url
    joiner = ";" if url.count("/") > 2 else "/;"
    return url + joiner + ";".join(params)

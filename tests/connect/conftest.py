"""Fixtures of the Spark Connect tests: one server for the session, a client without Java.

The tests need pyspark >= 4 (the server's jars and the client); the Spark 3.5 suite skips them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.connect_server import ConnectServer, start_connect


def _spark_major() -> int:
    try:
        import pyspark
    except ImportError:
        return 0
    return int(pyspark.__version__.split(".")[0])


# the Spark 3.5 suite (and a compile-only install) collects nothing here
collect_ignore_glob = [] if _spark_major() >= 4 else ["test_*.py"]

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Client:
    """``lakewide`` run as a separate process with no Java, against one project."""

    project: Path
    env: dict[str, str]

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """Start ``lakewide ARGS`` (stdout and stderr merged, as text)."""
        # LW_CONNECT_CLIENT_PYTHON: another environment's Python (`lakewide[connect]`, the
        # jar-less pyspark-client) as the client; the tests' own by default
        python = os.environ.get("LW_CONNECT_CLIENT_PYTHON", sys.executable)
        command = [python, "-m", "lakewide", "--project-dir", str(self.project), *args]
        return subprocess.Popen(
            command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def __call__(self, *args: str) -> tuple[int, str]:
        """Run ``lakewide ARGS``: (exit code, output)."""
        process = self.popen(*args)
        out, _ = process.communicate(timeout=600)
        return process.returncode, out


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """A Spark Connect server on 127.0.0.1 for the whole session (stopped at its end)."""
    log = tmp_path_factory.mktemp("connect") / "server.log"
    server = start_connect(log)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hadoop warehouse the Connect tests' catalog ``lw`` keeps its tables in."""
    return tmp_path_factory.mktemp("connect-warehouse")


@pytest.fixture(scope="session")
def remote(connect_server: ConnectServer, connect_warehouse: Path) -> Iterator[Any]:
    """The tests' own Connect session (they write sources and read results with it)."""
    from pyspark.sql import SparkSession

    from lakewide.spark.connect import retry_policy

    spark = SparkSession.builder.remote(connect_server.url).create()
    spark.client.set_retry_policies([retry_policy()])  # the last test stops the server
    spark.conf.set("spark.sql.catalog.lw", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.lw.type", "hadoop")
    spark.conf.set("spark.sql.catalog.lw.warehouse", str(connect_warehouse))
    yield spark
    if connect_server.process.poll() is None:
        spark.stop()

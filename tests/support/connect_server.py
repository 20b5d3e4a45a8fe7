"""A Spark Connect server for the tests: pyspark 4.x's own jars plus Iceberg's Spark 4 runtime.

It starts with plain ``java`` (pyspark's wheel has no ``sbin`` scripts):
``SparkSubmit --class org.apache.spark.sql.connect.service.SparkConnectServer`` on 127.0.0.1
and a free port, local[2], Iceberg's SQL extensions on. Catalogs are not configured here: the
lakewide client sets its profile's catalog on its own session (as against any server).

API: ``iceberg_runtime()`` (the jar from ~/.m2, fetched by ``.ci/run``; skips locally when
missing); ``start_connect(log)`` -> ``ConnectServer`` (``url``, ``stop()``), waiting until a
client's ``SELECT 1`` answers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ICEBERG = "1.12.0"
_OPENS = [
    f"--add-opens=java.base/{package}=ALL-UNNAMED"
    for package in (
        "java.lang",
        "java.lang.invoke",
        "java.nio",
        "java.util",
        "sun.nio.ch",
        "sun.util.calendar",
    )
]


def iceberg_runtime() -> Path:
    """Iceberg's runtime jar for the running pyspark's Spark line (from the local Maven repo)."""
    import pyspark

    line = ".".join(pyspark.__version__.split(".")[:2])
    name = f"iceberg-spark-runtime-{line}_2.13"
    jar = Path.home() / f".m2/repository/org/apache/iceberg/{name}/{ICEBERG}/{name}-{ICEBERG}.jar"
    if not jar.is_file():
        pytest.skip(f"{jar.name} missing: mvn dependency:get -Dartifact=org.apache.iceberg:...")
    return jar


@dataclass
class ConnectServer:
    """A running Spark Connect server process."""

    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        """The ``sc://`` address a client connects to."""
        return f"sc://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 30 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_connect(log: Path, timeout: float = 180.0) -> ConnectServer:
    """Start a Connect server on 127.0.0.1 (Iceberg's extensions on) and wait until it answers."""
    import pyspark

    home = Path(pyspark.__file__).parent
    port = _free_port()
    command = [
        "java",
        "-Xmx1g",
        *_OPENS,
        "-cp",
        f"{home / 'jars'}/*{os.pathsep}{iceberg_runtime()}",
        "org.apache.spark.deploy.SparkSubmit",
        "--master",
        "local[2]",
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.shuffle.partitions=4",
        "spark-internal",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "SPARK_HOME": str(home)},
        )
    server = ConnectServer(process, port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Connect server exited: {log.read_text()[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"the Connect server did not answer in {timeout:.0f}s")

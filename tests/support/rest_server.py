"""Apache Iceberg's REST catalog test server for the tests (REST catalogs on a real server).

The server is Iceberg's own: ``RESTCatalogAdapter`` and ``RESTCatalogServlet`` from Maven
Central's ``org.apache.iceberg:iceberg-core:<version>:tests`` in Jetty 11, the pieces that
``org.apache.iceberg.rest.RESTCatalogServer`` (``iceberg-open-api`` test fixtures, the server of
the ``apache/iceberg-rest-fixture`` image) puts together. That class listens on every network
interface, so tests/rest_catalog/LoopbackRestServer.java (compiled by ``javac`` once per test
process into a temporary folder; Java's source-file mode without javac) puts them together the
same way on 127.0.0.1. It keeps its catalog in a SQLite
file through Iceberg's JdbcCatalog and its tables in a local warehouse folder; its jars are
listed in tests/rest_catalog/pom.xml, with Hadoop from pyspark's own jars.

API:

* ``rest_classpath()``: the server's classpath, resolved by ``mvn dependency:build-classpath``
  once per test process (a Maven start takes seconds; it downloads into ~/.m2 the first time,
  ``.ci/run`` does it ahead); skips locally, fails in CI, when mvn or Maven Central is missing.
* ``RestServer``: ``uri``, ``warehouse``, ``stop()``; ``start_rest(folder, classpath, client)``
  starts one on 127.0.0.1 and a free port and waits until ``/v1/config`` answers; with
  ``client`` (``ID:SECRET``) it refuses other OAuth2 client credentials and requests without
  the token it issued (401). ``fault(mode)`` sets one of the server's faults (see
  LoopbackRestServer.java: ``500-any``, ``500-commit``, ``revoke``, ``halt-commit``; ``""``
  clears it); ``restart()`` starts a stopped (or halted) server again on its port and files.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.support.postgres_server import missing_prerequisite, stop_process

POM = Path(__file__).resolve().parents[1] / "rest_catalog" / "pom.xml"
LAUNCHER = POM.parent / "LoopbackRestServer.java"
_resolved: list[str] = []  # the classpath, once resolved in this process
_compiled: dict[str, list[str]] = {}  # classpath -> the java arguments that run the launcher


def _pyspark_hadoop_jars() -> list[str]:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    # Hadoop's shaded client and the commons-logging API it logs through (to slf4j)
    wanted = ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "jcl-over-slf4j-*.jar")
    return [str(p) for pattern in wanted for p in sorted(jars.glob(pattern))]


def rest_classpath(cache: Path) -> str:
    """The REST server's classpath (see the module docstring); ``cache``: a folder for Maven's
    output, used by the first call of the process."""
    if _resolved:
        return _resolved[0]
    if shutil.which("mvn") is None:
        missing_prerequisite("mvn missing: apt-get install maven (the REST catalog test server)")
    out = cache / "rest-classpath.txt"
    done = subprocess.run(
        ["mvn", "-q", "-f", str(POM), "dependency:build-classpath", f"-Dmdep.outputFile={out}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not out.is_file():
        missing_prerequisite(f"REST catalog server jars unavailable: {done.stdout[-500:]}")
    _resolved.append(":".join([out.read_text().strip(), *_pyspark_hadoop_jars()]))
    return _resolved[0]


def _launcher(classpath: str) -> list[str]:
    """``java`` arguments running LoopbackRestServer on ``classpath``: its classes compiled by
    ``javac`` once per process (Java's source-file mode compiles it at every start, seconds of
    a loaded machine), or the source file itself when javac is missing or fails."""
    if classpath not in _compiled:
        folder = Path(tempfile.mkdtemp(prefix="lakewide-rest-launcher-"))
        atexit.register(shutil.rmtree, folder, True)
        javac = shutil.which("javac")
        command = [str(javac), "-d", str(folder), "-cp", classpath, str(LAUNCHER)]
        done = subprocess.run(command, capture_output=True, timeout=300) if javac else None
        compiled = done is not None and done.returncode == 0
        _compiled[classpath] = (
            ["-cp", f"{folder}{os.pathsep}{classpath}", LAUNCHER.stem]
            if compiled
            else ["-cp", classpath, str(LAUNCHER)]
        )
    return _compiled[classpath]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RestServer:
    """A running RESTCatalogServer (see the module docstring)."""

    uri: str
    warehouse: Path
    process: subprocess.Popen[bytes]
    classpath: str = ""
    client: str | None = None
    warehouse_uri: str | None = None  # s3://...: where its tables are, instead of warehouse
    catalog_properties: dict[str, str] | None = None
    environment: dict[str, str] | None = None

    @property
    def folder(self) -> Path:
        """The server's folder (catalog database, warehouse, log, fault file)."""
        return self.warehouse.parent

    def fault(self, mode: str) -> None:
        """Set the server's fault (``""``: none); read by the server on its next request."""
        path = self.folder / "fault"
        if mode:
            path.write_text(mode)
        else:
            path.unlink(missing_ok=True)

    def restart(self) -> None:
        """Start the stopped server again on the same port over the same files."""
        self.stop()
        port = int(self.uri.rsplit(":", 1)[1])
        self.process = start_rest(
            self.folder,
            self.classpath,
            self.client,
            port,
            warehouse_uri=self.warehouse_uri,
            catalog_properties=self.catalog_properties,
            environment=self.environment,
        ).process

    def stop(self) -> None:
        """Stop the server (its own process only) and wait for it."""
        stop_process(self.process)


def start_rest(
    folder: Path,
    classpath: str,
    client: str | None = None,
    port: int | None = None,
    *,
    warehouse_uri: str | None = None,
    catalog_properties: dict[str, str] | None = None,
    environment: dict[str, str] | None = None,
) -> RestServer:
    """Start a REST catalog server over ``folder`` (SQLite catalog, local warehouse); with
    ``client`` (``ID:SECRET``) it accepts only those OAuth2 client credentials; ``port``: that
    one (a restart) instead of a free one. With ``warehouse_uri`` (``s3://...``) its tables go
    there instead, the server's catalog given ``catalog_properties`` (``io-impl``,
    ``s3.endpoint``...); ``environment``: more variables for its JVM (the AWS SDK's)."""
    port = port or _free_port()
    warehouse = folder / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    where = warehouse_uri or str(warehouse)
    args = [str(port), where, f"jdbc:sqlite:file:{folder / 'catalog.db'}"]
    args += [client] if client else []
    log = (folder / "server.log").open("ab")
    env = {**os.environ, **(environment or {})}
    for key, value in (catalog_properties or {}).items():  # read by LoopbackRestServer.java
        env["CATALOG_" + key.upper().replace("-", "__").replace(".", "_")] = value
    faults = f"-Dlakewide.faults={folder / 'fault'}"
    process = subprocess.Popen(
        ["java", "-Xmx256m", faults, *_launcher(classpath), *args],
        stdout=log,
        stderr=log,
        env=env,
    )
    server = RestServer(
        f"http://127.0.0.1:{port}",
        warehouse,
        process,
        classpath,
        client,
        warehouse_uri,
        catalog_properties,
        environment,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(server.uri + "/v1/config", timeout=2):
                return server
        time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"REST catalog server did not start: {(folder / 'server.log').read_text()}")

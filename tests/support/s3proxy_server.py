"""A second S3 implementation for the tests: s3proxy (``org.gaul:s3proxy``, Apache 2.0) on
127.0.0.1 over a folder (jclouds' ``filesystem`` blobstore), beside moto (tests/support/s3_server.py).

moto emulates AWS; s3proxy is what many teams run in front of other storage, and like most
S3-compatible stores it rejects the request checksums the AWS SDK v2 in Iceberg's
``iceberg-aws-bundle`` sends by default (``x-amz-content-sha256`` of an ``aws-chunked``
upload with a trailing checksum), which the profile's ``s3_checksums`` turns off. It checks
SigV4 signatures (a wrong secret is 403 ``SignatureDoesNotMatch``) for its one key; it has no
IAM, so no key that may only read.

API:

* ``s3proxy_server`` (pytest fixture, session scope): a running ``S3ProxyServer``; ``s3_store``
  (session scope, parametrised ``moto``/``s3proxy``): either server, for tests that run against
  both.
* ``S3ProxyServer``: ``endpoint``, ``bucket`` (created, empty), ``writer`` (its one key),
  ``reader`` (None: no IAM), ``authenticated()`` (a no-op: it always checks signatures),
  ``keys(prefix)``, ``stop()``.
* ``s3proxy_jar()``: the jar-with-dependencies in ~/.m2 (``.ci/run`` fetches it), or None.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lakewide.state.s3_objects import S3Client
from tests.support.postgres_server import free_port, missing_prerequisite, stop_process

S3PROXY_VERSION = "2.4.1"
_JAR = (
    Path.home()
    / f".m2/repository/org/gaul/s3proxy/{S3PROXY_VERSION}"
    / f"s3proxy-{S3PROXY_VERSION}-jar-with-dependencies.jar"
)
KEY_ID, SECRET = "lakewide-proxy-key", "lakewide-proxy-secret-0123456789"


def s3proxy_jar() -> Path | None:
    """s3proxy's ``jar-with-dependencies`` in the local Maven repository, or None."""
    return _JAR if _JAR.is_file() else None


@dataclass
class S3ProxyServer:
    """A running s3proxy (see the module docstring)."""

    endpoint: str
    process: subprocess.Popen[bytes]
    bucket: str = "lakewide-tests"
    writer: tuple[str, str] = (KEY_ID, SECRET)
    reader: tuple[str, str] | None = None
    name: str = "s3proxy"

    def client(self) -> S3Client:
        """A client signing with the server's key (path-style, us-east-1)."""
        return S3Client(self.endpoint, "us-east-1", True, *self.writer)

    def create_bucket(self, name: str) -> None:
        """Create bucket ``name``."""
        self.client().request("PUT", f"s3://{name}/")

    def keys(self, prefix: str) -> str:
        """The bucket's listing (ListObjectsV2 XML) under ``prefix``."""
        client = self.client()
        url = f"{client.url(self.bucket, '')}?list-type=2&prefix={prefix}"
        request = urllib.request.Request(url, method="GET")
        for header, value in client._headers("GET", url, b"").items():
            request.add_header(header, value)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return str(answer.read().decode())

    @contextlib.contextmanager
    def authenticated(self) -> Iterator[None]:
        """Signatures are always checked (moto's server checks them only inside this)."""
        yield

    def stop(self) -> None:
        """Stop the server (its own process only)."""
        stop_process(self.process)


def start_s3proxy(folder: Path) -> S3ProxyServer:
    """Start s3proxy on 127.0.0.1 and a free port over ``folder``/blobs; create ``bucket``."""
    jar = s3proxy_jar()
    if jar is None or shutil.which("java") is None:
        raise RuntimeError("s3proxy jar or java missing")
    port = free_port()
    (folder / "blobs").mkdir(parents=True, exist_ok=True)
    properties = folder / "s3proxy.conf"
    properties.write_text(
        f"s3proxy.endpoint=http://127.0.0.1:{port}\n"
        "s3proxy.authorization=aws-v2-or-v4\n"
        f"s3proxy.identity={KEY_ID}\ns3proxy.credential={SECRET}\n"
        "jclouds.provider=filesystem\n"
        f"jclouds.filesystem.basedir={folder / 'blobs'}\n"
    )
    log = (folder / "s3proxy.log").open("wb")
    process = subprocess.Popen(
        ["java", "-Xmx256m", "-jar", str(jar), "--properties", str(properties)],
        stdout=log,
        stderr=log,
    )
    server = S3ProxyServer(f"http://127.0.0.1:{port}", process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            urllib.request.urlopen(server.endpoint + "/", timeout=2).close()
            break
        except urllib.error.HTTPError:  # 403 to an unsigned request: it answers
            break
        except OSError:
            time.sleep(0.3)
    else:
        server.stop()
        raise RuntimeError(f"s3proxy did not start: {(folder / 's3proxy.log').read_text()[-2000:]}")
    try:
        server.create_bucket(server.bucket)
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="session")
def s3proxy_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3ProxyServer]:
    """The session's s3proxy (skipped locally / failed in CI when its jar is missing)."""
    if s3proxy_jar() is None:
        missing_prerequisite(
            "s3proxy missing from ~/.m2: mvn dependency:get -Dtransitive=false "
            f"-Dartifact=org.gaul:s3proxy:{S3PROXY_VERSION}:jar:jar-with-dependencies"
        )
    server = start_s3proxy(tmp_path_factory.mktemp("s3proxy"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session", params=["moto", "s3proxy"])
def s3_store(request: pytest.FixtureRequest) -> Any:
    """moto's server, then s3proxy: the tests that take it run against both."""
    return request.getfixturevalue("s3_server" if request.param == "moto" else "s3proxy_server")

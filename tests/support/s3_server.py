"""An S3-compatible server for the tests (warehouses on ``s3://``): moto's server on 127.0.0.1.

moto (``moto[server]``, the ``[test]`` extra) is an AWS emulator, not an object store; it was
chosen because SeaweedFS (a real object store with an S3 gateway) does not ``go install`` (its
go.mod has replace directives) and MinIO is AGPL. Its S3 speaks the wire protocol Iceberg's
S3FileIO (AWS SDK v2) and lakewide's own signed requests use, and with IAM authentication on
(``authenticated()``) it checks SigV4 signatures and IAM policies: a wrong secret is 403 ``SignatureDoesNotMatch``, an
unknown key 403 ``InvalidAccessKeyId``, a key whose policy only reads gets 403 ``AccessDenied``
on a write, a missing bucket 404 ``NoSuchBucket``.

API:

* ``s3_server`` (pytest fixture, session scope): a running ``S3Server``.
* ``S3Server``: ``endpoint`` (``http://127.0.0.1:PORT``), ``bucket`` (created, empty),
  ``writer`` and ``reader`` (``(access key id, secret)``: every S3 action / only reads; keys
  are checked only inside ``with server.authenticated():``),
  ``user(name, actions)`` (a new user and its key), ``allow(name, actions)`` (its policy
  replaced), ``create_bucket(name)``, ``stop()``; ``READ_ONLY``: the actions of a reader.
* ``aws_bundle_jar()``: Iceberg's ``iceberg-aws-bundle`` jar in ~/.m2 (``.ci/run`` fetches it),
  or None.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.postgres_server import free_port, missing_prerequisite, stop_process

AWS_BUNDLE_VERSION = "1.10.1"  # the newest 1.10.x Maven Central serves (the runtime is 1.10.2)
_M2 = Path.home() / ".m2" / "repository" / "org" / "apache" / "iceberg" / "iceberg-aws-bundle"
READ_ONLY = ["s3:GetObject", "s3:ListBucket", "s3:GetBucketLocation"]


def aws_bundle_jar() -> Path | None:
    """``iceberg-aws-bundle-<AWS_BUNDLE_VERSION>.jar`` in the local Maven repository, or None."""
    jar = _M2 / AWS_BUNDLE_VERSION / f"iceberg-aws-bundle-{AWS_BUNDLE_VERSION}.jar"
    return jar if jar.is_file() else None


def _moto_server() -> str | None:
    """The ``moto_server`` command: next to this Python, else on PATH."""
    beside = Path(sys.executable).with_name("moto_server")
    return str(beside) if beside.is_file() else shutil.which("moto_server")


@dataclass
class S3Server:
    """A running moto server (see the module docstring)."""

    endpoint: str
    process: subprocess.Popen[bytes]
    bucket: str = "lakewide-tests"
    writer: tuple[str, str] = ("", "")
    reader: tuple[str, str] = ("", "")
    name: str = "moto"

    def _call(self, method: str, path: str, data: bytes | None = None, service: str = "") -> bytes:
        """An unsigned request (accepted until IAM authentication is switched on); moto routes
        it to ``service`` by the scope of its (unchecked) Authorization header, S3 without."""
        request = urllib.request.Request(self.endpoint + path, data=data, method=method)
        request.add_header("Content-Type", "text/plain")  # not a form: moto reads the raw body
        if service:
            scope = f"AKIDEXAMPLE/20260101/us-east-1/{service}/aws4_request"
            request.add_header("Authorization", f"AWS4-HMAC-SHA256 Credential={scope}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            body: bytes = answer.read()
            return body

    def _iam(self, action: str, **params: str) -> str:
        query = urllib.parse.urlencode({"Action": action, "Version": "2010-05-08", **params})
        return self._call("POST", "/?" + query, b"", "iam").decode()

    def user(self, name: str, actions: list[str]) -> tuple[str, str]:
        """A new IAM user allowed ``actions`` on every S3 resource, and its new access key
        (call outside ``authenticated()``)."""
        self._iam("CreateUser", UserName=name)
        self.allow(name, actions)
        answer = self._iam("CreateAccessKey", UserName=name)
        key = re.search(r"<AccessKeyId>([^<]+)</AccessKeyId>", answer)
        secret = re.search(r"<SecretAccessKey>([^<]+)</SecretAccessKey>", answer)
        assert key and secret, answer
        return key.group(1), secret.group(1)

    def allow(self, name: str, actions: list[str]) -> None:
        """Replace user ``name``'s policy: ``actions`` on every S3 resource (``READ_ONLY``: it
        may not write; ``["s3:*"]``: everything); call outside ``authenticated()``."""
        statement = {"Effect": "Allow", "Action": actions, "Resource": "*"}
        policy = json.dumps({"Version": "2012-10-17", "Statement": [statement]})
        self._iam("PutUserPolicy", UserName=name, PolicyName="s3", PolicyDocument=policy)

    def keys(self, prefix: str) -> str:
        """The bucket's listing (ListObjectsV2 XML) under ``prefix`` (outside ``authenticated()``)."""
        return self._call("GET", f"/{self.bucket}?list-type=2&prefix={prefix}").decode()

    def create_bucket(self, name: str) -> None:
        """Create bucket ``name`` (before authentication is on, or as part of the set-up)."""
        self._call("PUT", f"/{name}", b"")

    @contextlib.contextmanager
    def authenticated(self) -> Iterator[None]:
        """IAM authentication on meanwhile: every request must be signed by a known key whose
        policy allows it. Off otherwise, because moto (5.2) miscomputes the signature of a
        request whose query holds a ``/`` (ListObjectsV2 with a prefix, which S3FileIO's
        prefix listing sends): real S3 accepts those, moto answers 403."""
        self._call("POST", "/moto-api/reset-auth", b"0")
        try:
            yield
        finally:
            self._call("POST", "/moto-api/reset-auth", b"inf")

    def stop(self) -> None:
        """Stop the server (its own process only)."""
        stop_process(self.process)


def start_s3(log: Path) -> S3Server:
    """Start moto on 127.0.0.1, create ``bucket`` and the two users, switch IAM auth on."""
    command = _moto_server()
    if command is None:
        raise RuntimeError("moto_server not found: pip install 'moto[server]'")
    port = free_port()
    out = log.open("wb")
    process = subprocess.Popen(
        [command, "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=out
    )
    server = S3Server(f"http://127.0.0.1:{port}", process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError):
            server._call("GET", "/moto-api/data.json")
            break
        time.sleep(0.2)
    else:
        server.stop()
        raise RuntimeError(f"moto server did not start: {log.read_text()[-2000:]}")
    try:
        server.writer = server.user("lakewide-writer", ["s3:*"])
        server.reader = server.user("lakewide-reader", READ_ONLY)
        server.create_bucket(server.bucket)
    except BaseException:
        server.stop()  # a failed set-up leaves no server behind
        raise
    return server


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """The session's S3 server (skipped locally / failed in CI when moto is missing)."""
    if _moto_server() is None:
        missing_prerequisite("moto_server missing: pip install 'moto[server]' (the S3 tests)")
    server = start_s3(tmp_path_factory.mktemp("s3") / "moto.log")
    try:
        yield server
    finally:
        server.stop()

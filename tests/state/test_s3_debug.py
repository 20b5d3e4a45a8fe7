"""``lakewide debug``'s storage check against moto's S3 server (tests/support/s3_server.py), no Spark:
a small object written, read back and deleted; an unreachable endpoint, a wrong secret, a key
that may only read, a missing bucket and a missing AWS bundle jar each exit 2 before Spark
starts, saying what to fix and never showing the secret. A REST catalog whose profile names no
warehouse has the storage it hands out probed, on moto and on s3proxy
(tests/support/s3proxy_server.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.project.profiles_file import load_output
from lakewide.state.rest_metadata import RestMetadataReader
from lakewide.state.s3_objects import S3Client, S3RequestError
from lakewide.state.warehouse_probe import probe_warehouse
from tests.support.project_factory import make_project, run_main
from tests.support.s3_server import S3Server

SECRET_ENV = "LW_T_S3_SECRET"


def _profile(tmp_path: Path, s3: S3Server, key_id: str, **over: str) -> str:
    jar = tmp_path / "iceberg-aws-bundle-1.10.1.jar"  # the check before Spark looks at names
    jar.write_bytes(b"PK")
    keys = {
        "catalog_type": "jdbc",
        "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}",
        "warehouse": f"s3://{s3.bucket}/debug-wh",
        "s3_endpoint": s3.endpoint,
        "s3_access_key_id": key_id,
        "s3_secret_access_key": f"\"{{{{ env_var('{SECRET_ENV}') }}}}\"",
        "jars": f"['{jar}']",
        **over,
    }
    lines = "".join(f"      {k}: {v}\n" for k, v in keys.items() if v)
    return f"demo:\n  target: dev\n  outputs:\n    dev:\n{lines}"


def _debug(
    tmp_path: Path,
    profile: str,
    secret: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str]:
    monkeypatch.setenv(SECRET_ENV, secret)
    root = make_project(tmp_path / "p", {"profiles.yml": profile})
    return run_main(monkeypatch, capsys, "--project-dir", str(root), "debug")


def test_probe_writes_reads_and_deletes(tmp_path: Path, s3_server: S3Server) -> None:
    key_id, secret = s3_server.writer
    path = tmp_path / "profiles.yml"
    path.write_text(
        _profile(tmp_path, s3_server, key_id).replace(f"env_var('{SECRET_ENV}')", f"'{secret}'")
    )
    output = load_output(path, "demo", project_root=tmp_path)
    with s3_server.authenticated():
        line = probe_warehouse(output, output.warehouse)
    assert "wrote, read and deleted a test object" in line
    listing = s3_server._call("GET", f"/{s3_server.bucket}?list-type=2&prefix=debug-wh")
    assert b".lakewide-debug-" not in listing  # nothing left behind
    folder = tmp_path / "local-wh"
    folder.mkdir()
    assert "wrote, read and deleted a test file" in probe_warehouse(output, str(folder))
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("unreachable", ["did not answer", "s3_endpoint", "could not write"]),
        ("wrong-secret", ["403 SignatureDoesNotMatch", "s3_secret_access_key"]),
        ("read-only", ["could not write", "403 AccessDenied", "s3:PutObject"]),
        ("no-bucket", ["404 NoSuchBucket", "does not exist", "no-such-bucket"]),
        ("no-bundle", ["iceberg-aws-bundle", "[demo.outputs.dev.jars]"]),
    ],
)
def test_debug_storage_failures_exit_2_without_the_secret(
    tmp_path: Path,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: str,
    says: list[str],
) -> None:
    key_id, secret = s3_server.reader if case == "read-only" else s3_server.writer
    over = {
        "unreachable": {"s3_endpoint": "http://127.0.0.1:9"},
        "no-bucket": {"warehouse": "s3://no-such-bucket/wh"},
        "no-bundle": {"jars": ""},
    }.get(case, {})
    profile = _profile(tmp_path, s3_server, key_id, **over)
    given = secret + "-wrong" if case == "wrong-secret" else secret
    with s3_server.authenticated():
        code, output = _debug(tmp_path, profile, given, monkeypatch, capsys)
    assert code == 2, output
    assert "Traceback" not in output
    assert all(text in output for text in says), output
    assert secret not in output and given not in output


def test_request_error_names_status_and_code(s3_server: S3Server) -> None:
    client = S3Client(s3_server.endpoint, "us-east-1", True, *s3_server.writer)
    with pytest.raises(S3RequestError) as caught:
        client.request("GET", f"s3://{s3_server.bucket}/missing-object")
    assert (caught.value.status, caught.value.code) == (404, "NoSuchKey")


def test_debug_probes_the_storage_a_rest_catalog_hands_out(
    tmp_path: Path,
    s3_store: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The docs' REST + S3 profile names no warehouse (the server decides the locations): the
    probe writes where the server would put a new table, and a wrong secret exits 2 (on moto
    and on s3proxy) instead of `all checks passed`."""
    from tests.integration.test_s3_warehouse import rest_on_s3

    server = rest_on_s3(tmp_path / "rest", s3_store)
    try:
        key_id, secret = s3_store.writer
        over = {"catalog_type": "rest", "uri": server.uri, "warehouse": ""}
        profile = _profile(tmp_path, s3_store, key_id, **over)
        path = tmp_path / "profiles.yml"
        path.write_text(profile.replace(f"env_var('{SECRET_ENV}')", f"'{secret}'"))
        output = load_output(path, "demo", project_root=tmp_path)
        RestMetadataReader(output).catalog().create_namespace("default")
        with s3_store.authenticated():
            location, found = RestMetadataReader(output).storage_location("default")
            assert location is not None, found
            assert location.startswith(f"s3://{s3_store.bucket}/rest-wh/default/"), location
            assert "wrote, read and deleted" in probe_warehouse(output, location)
            code, out = _debug(tmp_path, profile, secret + "-wrong", monkeypatch, capsys)
        assert code == 2, out
        assert "403 SignatureDoesNotMatch" in out and "s3_secret_access_key" in out, out
        assert location in out and "all checks passed" not in out
        assert secret not in out and "Traceback" not in out
    finally:
        server.stop()

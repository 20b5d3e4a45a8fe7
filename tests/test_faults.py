"""Profile values Spark would fail on late, bad seed values, and faults during a run (issue 9,
section 3): a clear message naming file and key, exit 2 for config, 1 for a failed model, 130
for Ctrl-C, no traceback, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lakewide.engine.runtime import check_catalog_supported
from lakewide.errors import ConfigError
from lakewide.profiles import Output
from tests.project_factory import make_project
from tests.test_bad_inputs import MODEL, assert_clean_failure, run_main

PROFILE = """\
demo:
  target: dev
  outputs:
    dev:
      catalog: lw
      namespace: analytics
{settings}"""


@pytest.fixture(autouse=True)
def _no_outside_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKEWIDE_PROFILES_DIR", raising=False)


def project_with(tmp_path: Path, **settings: str) -> Path:
    """A one-model project whose dev output has ``settings`` (YAML values as written)."""
    lines = "".join(f"      {key}: {value}\n" for key, value in settings.items())
    return make_project(tmp_path / "p", {"models/m.sql": MODEL,
                                         "profiles.yml": PROFILE.format(settings=lines)})


# ------------------------------------------------------------------------ bad master URL


@pytest.mark.parametrize("master", ["nonsense", "'spark://'", "'spark://host'", "'local[0]'",
                                    "'local[x]'", "'k8s://'", "''"])
@pytest.mark.parametrize("command", ["run", "ls", "debug"])
def test_bad_master_exits_2_before_spark(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         master: str, command: str) -> None:
    root = project_with(tmp_path, master=master)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert_clean_failure(code, output, "profiles.yml", "[demo.outputs.dev.master]",
                         "is not a Spark master URL", "local[*]", "spark://HOST:PORT", "yarn",
                         "k8s://")
    assert not (root / "warehouse").exists()


@pytest.mark.parametrize("master", ["local", "local[1]", "local[*]", "local[4,2]",
                                    "local-cluster[2,1,1024]", "spark://h1:7077",
                                    "spark://h1:7077,h2:7077", "yarn", "k8s://https://k:6443",
                                    "k8s://k", "mesos://m:5050"])
def test_accepted_master_urls(tmp_path: Path, master: str) -> None:
    from tests.project_factory import manifest_of

    root = project_with(tmp_path, master=f"'{master}'")
    assert manifest_of(root).output.master == master


# ------------------------------------------------------------------------ unwritable warehouse


def test_warehouse_under_a_file_exits_2(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    root = project_with(tmp_path, warehouse=str(blocker / "wh"))
    for command in ("run", "seed", "build"):
        code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
        assert_clean_failure(code, output, "profiles.yml", "[demo.outputs.dev.warehouse]",
                             f"{blocker} is a file, not a folder", "set `warehouse` to a folder")
    assert blocker.read_text() == "not a folder"


def test_warehouse_that_is_a_file_exits_2(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    blocker = tmp_path / "wh"
    blocker.write_text("")
    root = project_with(tmp_path, warehouse=f"file://{blocker}")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert_clean_failure(code, output, "[demo.outputs.dev.warehouse]", "is a file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_warehouse_in_a_read_only_folder_exits_2(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        root = project_with(tmp_path, warehouse=str(locked / "wh"))
        code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
        assert_clean_failure(code, output, "[demo.outputs.dev.warehouse]", "cannot be written",
                             "ermission denied")
    finally:
        locked.chmod(0o755)


def test_read_only_file_system_is_reported(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """What a read-only mount answers (EROFS even for root), simulated at the write probe."""
    import errno

    real_write = Path.write_bytes

    def read_only(self: Path, data: bytes) -> int:
        if self.name.startswith(".lakewide-write-probe"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_write(self, data)

    root = project_with(tmp_path)
    monkeypatch.setattr(Path, "write_bytes", read_only)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert_clean_failure(code, output, "[demo.outputs.dev.warehouse]", "Read-only file system")


# ------------------------------------------------------------------------ REST catalog


@pytest.mark.parametrize("command", ["run", "seed", "build", "show m", "debug"])
def test_rest_catalog_refused_before_spark(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           command: str) -> None:
    root = project_with(tmp_path, catalog_type="rest", uri="http://localhost:8181",
                        warehouse="s3://bucket/wh")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), *command.split())
    assert_clean_failure(code, output, "profiles.yml", "[demo.outputs.dev.catalog_type]",
                         "HttpClient 5", "jdbc", "hadoop", "spark.jars.packages")


@pytest.mark.parametrize(("settings", "refused"), [
    ({"catalog_type": "rest"}, True),
    ({"catalog_properties": {"catalog-impl": "org.apache.iceberg.rest.RESTCatalog"},
      "catalog_type": "jdbc"}, True),
    ({"catalog_type": "rest", "spark_conf": {"spark.jars.packages": "org.apache.iceberg:x:1"}},
     False),
    ({"catalog_type": "rest", "spark_conf": {"spark.jars": "/opt/iceberg-runtime.jar"}}, False),
    ({"catalog_type": "jdbc"}, False),
    ({"catalog_type": "hadoop"}, False),
])
def test_rest_refused_only_with_bundled_jars(settings: dict, refused: bool) -> None:
    output = Output(**settings)
    if refused:
        with pytest.raises(ConfigError, match="HttpClient 5"):
            check_catalog_supported(output)
    else:
        check_catalog_supported(output)

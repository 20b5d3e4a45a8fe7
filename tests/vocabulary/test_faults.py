"""Profile values Spark would fail on late, bad seed values, and faults during a run (issue 9,
section 3): a clear message naming file and key, exit 2 for config, 1 for a failed model, 130
for Ctrl-C, no traceback, nothing written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.profiles import Output
from lakewide.state.lock import WarehouseLock
from tests.features.test_bad_inputs import MODEL, assert_clean_failure, run_main, session_adapter  # noqa: F401
from tests.support.cli_process import quick_jvm
from tests.support.project_factory import make_project

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
    return make_project(
        tmp_path / "p", {"models/m.sql": MODEL, "profiles.yml": PROFILE.format(settings=lines)}
    )


# ------------------------------------------------------------------------ bad master URL


@pytest.mark.parametrize(
    "master",
    ["nonsense", "'spark://'", "'spark://host'", "'local[0]'", "'local[x]'", "'k8s://'", "''"],
)
@pytest.mark.parametrize("command", ["run", "ls", "debug"])
def test_bad_master_exits_2_before_spark(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    master: str,
    command: str,
) -> None:
    root = project_with(tmp_path, master=master)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert_clean_failure(
        code,
        output,
        "profiles.yml",
        "[demo.outputs.dev.master]",
        "not a Spark master URL",
        "local[*]",
        "spark://HOST:PORT",
        "yarn",
        "k8s://",
    )
    assert not (root / "warehouse").exists()


def test_bad_master_from_env_var_is_not_echoed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("LW_MASTER", "spark://user:s3cret@host")
    root = project_with(tmp_path, master="\"{{ env_var('LW_MASTER') }}\"")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert_clean_failure(code, output, "[demo.outputs.dev.master] not a Spark master URL")
    assert "s3cret" not in output


@pytest.mark.parametrize(
    "master",
    [
        "local",
        "local[1]",
        "local[*]",
        "local[4,2]",
        "local-cluster[2,1,1024]",
        "spark://h1:7077",
        "spark://h1:7077,h2:7077",
        "yarn",
        "k8s://https://k:6443",
        "k8s://k",
        "mesos://m:5050",
    ],
)
def test_accepted_master_urls(tmp_path: Path, master: str) -> None:
    from tests.support.project_factory import manifest_of

    root = project_with(tmp_path, master=f"'{master}'")
    assert manifest_of(root).output.master == master


# ------------------------------------------------------------------------ unwritable warehouse


def test_warehouse_under_a_file_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    root = project_with(tmp_path, warehouse=str(blocker / "wh"))
    for command in ("run", "seed", "build"):
        code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
        assert_clean_failure(
            code,
            output,
            "profiles.yml",
            "[demo.outputs.dev.warehouse]",
            f"{blocker} is a file, not a folder",
            "set `warehouse` to a folder",
        )
    assert blocker.read_text() == "not a folder"


def test_warehouse_that_is_a_file_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "wh"
    blocker.write_text("")
    root = project_with(tmp_path, warehouse=f"file://{blocker}")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert_clean_failure(code, output, "[demo.outputs.dev.warehouse]", "is a file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_warehouse_in_a_read_only_folder_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        root = project_with(tmp_path, warehouse=str(locked / "wh"))
        code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
        assert_clean_failure(
            code, output, "[demo.outputs.dev.warehouse]", "cannot be written", "ermission denied"
        )
    finally:
        locked.chmod(0o755)


def test_read_only_file_system_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
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


def test_writable_warehouse_passes_and_leaves_no_probe(tmp_path: Path) -> None:
    from lakewide.project.profiles import check_warehouse_writable

    output = Output(catalog_type="hadoop", warehouse=str(tmp_path / "new" / "wh"))
    check_warehouse_writable(output)
    assert (tmp_path / "new" / "wh").is_dir() and not any((tmp_path / "new" / "wh").iterdir())
    check_warehouse_writable(Output(catalog_type="hadoop", warehouse="s3://bucket/wh"))
    check_warehouse_writable(Output(catalog_type="jdbc", warehouse=str(tmp_path / "a_file")))


# ------------------------------------------------------------------------ REST catalog profile


@pytest.mark.parametrize(
    ("settings", "key", "says"),
    [
        ({"catalog_type": "rest"}, "uri", "needs `uri`"),
        ({"catalog_type": "rest", "uri": "thrift://h:9083"}, "uri", "http:// or https://"),
        (
            {
                "catalog_type": "rest",
                "uri": "http://h",
                "credential": "\"{{ env_var('LW_T_C') }}\"",
            },
            "credential",
            "CLIENT_ID:CLIENT_SECRET",
        ),
        ({"catalog_type": "hadoop", "token": "\"{{ env_var('LW_T_C') }}\""}, "token", "REST"),
    ],
)
@pytest.mark.parametrize("command", ["run", "debug"])
def test_bad_rest_settings_exit_2_before_spark_without_the_secret(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    settings: dict[str, str],
    key: str,
    says: str,
    command: str,
) -> None:
    monkeypatch.setenv("LW_T_C", "no-colon-secret-123")
    root = project_with(tmp_path, **settings)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert_clean_failure(code, output, "profiles.yml", f"[demo.outputs.dev.{key}]", says)
    assert "no-colon-secret-123" not in output


def test_rest_secrets_are_set_at_runtime_and_masked() -> None:
    output = Output(catalog_type="rest", uri="http://h", credential="id:pw-1", token="tk-2")
    assert output.catalog_secrets() == {"credential": "id:pw-1", "token": "tk-2"}
    assert "credential" not in output.iceberg_catalog_properties()
    assert "pw-1" not in repr(output) and "tk-2" not in repr(output)
    assert set(output.secret_values()) == {"id:pw-1", "tk-2", "pw-1"}


# ------------------------------------------------------------------------ seed values


SEED_TYPES = (
    "seeds:\n  - name: orders\n    column_types: {id: int, amount: 'decimal(6,2)', day: date}\n"
)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            "1,2.50,2024-05-01\n2,abc,2024-05-02\n3,x,2024-05-03\n",
            [
                "seeds/orders.csv:3: [amount] value 'abc' is not a valid decimal(6,2) (2 rows do not fit)"
            ],
        ),
        (
            "1,2.50,2024-05-01\n99999999999,1.00,2024-13-01\n",
            [
                "seeds/orders.csv:3: [id] value '99999999999' is not a valid int",
                "seeds/orders.csv:3: [day] value '2024-13-01' is not a valid date",
            ],
        ),
        (
            "1,2.50,2024-05-01\n2,12345.678,\n",
            ["seeds/orders.csv:3: [amount] value '12345.678' is not a valid decimal(6,2)"],
        ),
    ],
    ids=["text-in-decimal", "overflow-and-bad-date", "too-wide-decimal"],
)
def test_seed_value_that_does_not_fit_its_type(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    warehouse: Path,
    session_adapter: None,  # noqa: F811 - the fixture, imported above
    rows: str,
    expected: list[str],
) -> None:
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        f"      warehouse: {warehouse}\n      namespace: faults_seed\n"
    )
    root = make_project(
        tmp_path,
        {
            "profiles.yml": profiles,
            "seeds/types.yml": SEED_TYPES,
            "seeds/aaa_good.csv": "k\n1\n",
            "seeds/orders.csv": "id,amount,day\n" + rows,
        },
    )
    monkeypatch.chdir(root)
    code, output = run_main(monkeypatch, capsys, "seed")
    assert_clean_failure(
        code, output, *expected, "declare the column's type in the seed's column_types"
    )
    assert "aaa_good" not in output  # checked before any seed is loaded
    assert not (warehouse / "faults_seed").exists()


@pytest.mark.parametrize(
    ("text", "value", "line"),
    [
        ("id,v\n1,a\n2,b\n", "b", 3),
        ('id,v\n1,"two\nlines"\n2,b\n', "b", 4),
        ("id,v\n1,a\n", "zz", None),
    ],
)
def test_line_of_value_counts_lines_of_quoted_records(
    tmp_path: Path, text: str, value: str, line: int | None
) -> None:
    from lakewide.project.seeds import line_of_value

    path = tmp_path / "s.csv"
    path.write_text(text)
    assert line_of_value(path, "v", value) == line


@pytest.mark.spark
def test_seed_declared_types_keep_the_text(tmp_path: Path, warehouse: Path, spark: Any) -> None:
    """Declared columns are cast from the CSV text: a declared string keeps leading zeros."""
    from lakewide.project.nodes import Relation
    from lakewide.spark.adapter import SparkAdapter

    csv = tmp_path / "zips.csv"
    csv.write_text("zip,n,day\n00123,7,2024-05-01\n,8,\n")
    adapter = SparkAdapter(Output(catalog="lw", warehouse=str(warehouse)), spark=spark)
    relation = Relation("lw", "faults_seed_ok", "zips")
    types = {"zip": "string", "n": "int", "day": "date"}
    assert adapter.load_csv(csv, relation, types) == ("created", 2)
    rows = sorted(spark.table(str(relation)).collect(), key=lambda r: r.n)
    assert [(r.zip, r.n, str(r.day)) for r in rows] == [
        ("00123", 7, "2024-05-01"),
        (None, 8, "None"),
    ]


# ------------------------------------------------------------------------ Ctrl-C, a killed JVM


SLOW_MODEL = """\
{{ config(materialized='table') }}
SELECT count(DISTINCT a.id * b.id + {{ var('n', 0) }}) AS n
FROM range({{ var('size', 10) }}) AS a CROSS JOIN range({{ var('size', 10) }}) AS b
"""
_LOG4J_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (INFO|WARN) ")


def lakewide_process(root: Path, *args: str) -> subprocess.Popen[str]:
    """``python -m lakewide ARGS`` in its own process group, Spark's INFO log on (to see jobs)."""
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "200",
        "LAKEWIDE_SPARK_LOG_LEVEL": "INFO",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "lakewide", "--project-dir", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=quick_jvm(env),
        start_new_session=True,
    )


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (the Spark JVM under the CLI)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry))
    return found


def gone(pid: int, wait: float = 20.0) -> bool:
    """True once ``pid`` has exited (a zombie counts: nothing runs any more)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.2)
    return False


def until_heavy_stage(proc: subprocess.Popen[str], timeout: float = 180.0) -> list[str]:
    """Lines printed until Spark starts the model's big stage (killed after ``timeout``)."""
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "Submitting ShuffleMapStage" in line:
                return lines
    finally:
        watchdog.cancel()
    raise AssertionError("the run ended before its big stage:\n" + "".join(lines))


def shown(lines: list[str]) -> str:
    """What the user sees, less Spark's INFO/WARN lines turned on to follow the jobs."""
    return "".join(line for line in lines if not _LOG4J_LINE.match(line))


def table_state(root: Path) -> list[str]:
    metadata = root / "warehouse" / "analytics" / "slow" / "metadata"
    return sorted(
        f"{p.name}:{p.read_text() if p.name.endswith('hint.text') else ''}"
        for p in metadata.iterdir()
    )


@pytest.fixture(scope="module")
def built_slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose table model ``slow`` was built once (small); ``--vars`` make it heavy."""
    root = make_project(tmp_path_factory.mktemp("faults") / "p", {"models/slow.sql": SLOW_MODEL})
    done = subprocess.run(
        [sys.executable, "-m", "lakewide", "--project-dir", str(root), "run"],
        capture_output=True,
        text=True,
        timeout=300,
        env=quick_jvm(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def assert_nothing_left(root: Path, before: list[str], jvms: list[int]) -> None:
    """The table is as before, the warehouse lock is free and no JVM of the run remains."""
    assert table_state(root) == before
    with WarehouseLock(root / "warehouse" / ".lakewide.lock", 0):
        pass
    assert jvms and all(gone(pid) for pid in jvms)


@pytest.mark.spark
@pytest.mark.slow
def test_ctrl_c_during_a_run(built_slow: Path) -> None:
    before = table_state(built_slow)
    proc = lakewide_process(built_slow, "run", "--vars", "{size: 3000000, n: 1}")
    lines = until_heavy_stage(proc)
    jvms = children(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    rest, _ = proc.communicate(timeout=60)
    output = shown([*lines, *rest.splitlines(keepends=True)])
    assert proc.returncode == 130, output
    assert output.strip().splitlines()[-1] == "interrupted", output
    for noise in ("Traceback", "py4j", "Py4J", "\tat ", " ERROR "):
        assert noise not in output, output
    assert_nothing_left(built_slow, before, jvms)


@pytest.mark.spark
@pytest.mark.slow
def test_jvm_killed_during_a_run(built_slow: Path) -> None:
    before = table_state(built_slow)
    proc = lakewide_process(built_slow, "run", "--vars", "{size: 3000000, n: 2}")
    lines = until_heavy_stage(proc)
    jvms = children(proc.pid)
    for pid in jvms:
        os.kill(pid, signal.SIGKILL)
    rest, _ = proc.communicate(timeout=60)
    output = shown([*lines, *rest.splitlines(keepends=True)])
    assert proc.returncode == 1, output
    assert "error: the Spark JVM was killed by signal 9 during the run" in output, output
    assert "`lakewide run` again resumes" in output
    for noise in ("Traceback", "py4j", "Py4J", "\tat "):
        assert noise not in output, output
    assert_nothing_left(built_slow, before, jvms)


def test_ctrl_c_before_spark_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Ctrl-C while lakewide itself works under the lock (the no-op check; no JVM yet):
    'interrupted', exit 130, the lock released."""
    import lakewide.state.nothing_new

    def interrupted(*_args: Any, **_kwargs: Any) -> None:
        assert (root / "warehouse" / ".lakewide.lock").exists()  # taken by now
        raise KeyboardInterrupt

    root = project_with(tmp_path)
    monkeypatch.setattr(lakewide.state.nothing_new, "fresh_models", interrupted)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert code == 130, output
    assert output.strip() == "interrupted"
    with WarehouseLock(root / "warehouse" / ".lakewide.lock", 0):
        pass


# ------------------------------------------------------------------------ test hooks


def test_pause_hook_holds_a_process_at_its_point_until_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakewide.vocabulary import faults

    monkeypatch.setattr(faults, "_seen", faults.Counter())
    monkeypatch.setenv("LAKEWIDE_PAUSE_AT", f"before-commit:{tmp_path}")
    faults.checkpoint("before-stage")  # another point: passes
    held = threading.Thread(target=faults.checkpoint, args=("before-commit",))
    held.start()
    deadline = time.monotonic() + 10
    while not list(tmp_path.glob("*.paused")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [p.name for p in tmp_path.glob("*.paused")] == [f"{os.getpid()}.paused"]
    time.sleep(0.2)
    assert held.is_alive()  # waits for go
    (tmp_path / "go").touch()
    held.join(timeout=5)
    assert not held.is_alive()
    faults.checkpoint("before-commit")  # the first time only

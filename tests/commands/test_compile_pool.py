"""``lakewide compile --threads N``: models compiled on forked processes give the files and
checksums a serial compile gives, in the same order, and a failing model fails the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakewide.artifacts.compiled_files import SERIAL_BELOW
from tests.support.project_factory import make_project, run_main

SOURCES = """
version: 2
sources:
  - name: src
    schema: ods
    tables:
      - name: x
      - name: y
"""
MODEL = (
    "{{{{ config(merge_engine='partial_update', primary_key='{key}') }}}}\n"
    "SELECT k, a, CAST(NULL AS STRING) AS b FROM {{{{ source('src', 'x') }}}}\n"
    "UNION ALL\n"
    "SELECT k, CAST(NULL AS STRING) AS a, b FROM {{{{ source('src', 'y') }}}}\n"
)


def project(root: Path, bad: str | None = None) -> Path:
    models = {
        f"models/m{i:02d}.sql": MODEL.format(key="nope" if f"m{i:02d}" == bad else "k")
        for i in range(SERIAL_BELOW + 2)
    }
    return make_project(root, {"models/sources.yml": SOURCES, **models})


def compiled_files(root: Path) -> dict[str, str]:
    folder = root / "target" / "compiled"
    return {
        str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def compile_all_plans(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], root: Path, threads: str
) -> tuple[int, str]:
    """``lakewide compile --all-plans`` on ``threads`` processes: (exit code, output)."""
    args = ("--project-dir", str(root), "compile", "--threads", threads, "--all-plans")
    return run_main(monkeypatch, capsys, *args)


def test_processes_write_what_one_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = {}
    for threads in ("1", "2"):
        root = project(tmp_path / f"t{threads}")
        code, out = compile_all_plans(monkeypatch, capsys, root, threads)
        assert code == 0, out
        lines = [line.split(" ")[1] for line in out.splitlines() if line.startswith("compiled m")]
        nodes = json.loads((root / "target" / "manifest.json").read_text())["nodes"]
        checksums = {n["name"]: n["compiled_checksum"]["checksum"] for n in nodes.values()}
        runs[threads] = (lines, compiled_files(root), checksums)
    assert runs["1"] == runs["2"]
    lines, files, _ = runs["2"]
    assert lines == sorted(lines) and len(lines) == SERIAL_BELOW + 2  # in run order
    assert any(name.endswith("plans/incremental_all_merge.sql") for name in files)


def test_a_failing_model_fails_as_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = {}
    for threads in ("1", "2"):
        root = project(tmp_path / f"t{threads}", bad="m05")
        code, out = compile_all_plans(monkeypatch, capsys, root, threads)
        assert code == 2, out
        outputs[threads] = out[out.index("m05") :]
    assert "m05" in outputs["2"] and "primary_key" in outputs["2"]
    assert outputs["1"] == outputs["2"]

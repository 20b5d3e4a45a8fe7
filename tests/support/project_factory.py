"""Build small lakewide projects on disk for tests (dbt style: a dict of relative path -> text)."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.manifest import Manifest, load_manifest
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import load_project

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_PARTS = ("pyproject.toml", "profiles.yml", "models", "macros", "seeds", "data-tests")

DEFAULT_PYPROJECT = """\
[project]
name = "demo"
version = "0.1.0"

[tool.lakewide]
profile = "demo"
"""

DEFAULT_PROFILES = """\
demo:
  target: dev
  outputs:
    dev:
      catalog: lw
      catalog_type: hadoop
      warehouse: warehouse
      namespace: analytics
"""

#: a profile with two targets in one catalog: ``prod`` (the default) and ``dev``
PROD_DEV_PROFILES = """\
demo:
  target: prod
  outputs:
    prod: {catalog: lw, catalog_type: hadoop, warehouse: warehouse, namespace: prod}
    dev: {catalog: lw, catalog_type: hadoop, warehouse: warehouse, namespace: dev}
"""


def make_project(tmp_path: Path, files: dict[str, str | None]) -> Path:
    """Write ``files`` (relative path -> text, dedented) under ``tmp_path`` and return it.

    ``pyproject.toml`` and ``profiles.yml`` get defaults (project and profile ``demo``, a hadoop
    catalog ``lw`` with namespace ``analytics``) unless given; map one to ``None`` to leave it out.
    """
    everything: dict[str, str | None] = {
        "pyproject.toml": DEFAULT_PYPROJECT,
        "profiles.yml": DEFAULT_PROFILES,
        **files,
    }
    for relative, text in everything.items():
        if text is None:
            continue
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def manifest_of(
    root: Path,
    *,
    target: str | None = None,
    variables: dict[str, Any] | None = None,
    incremental: set[str] | None = None,
) -> Manifest:
    """Load a project's manifest the way the CLI does (profiles.yml from the project folder)."""
    project = load_project(root)
    output = load_output(
        find_profiles_file(project.root, root), project.profile, target, project.root
    )
    return load_manifest(project, output, variables=variables, incremental=incremental)


def copy_example_project(dest: Path) -> Path:
    """Copy the repository's example project (pyproject, profiles, models, macros, seeds)."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in EXAMPLE_PARTS:
        source = REPO_ROOT / part
        if source.is_dir():
            shutil.copytree(source, dest / part)
        else:
            shutil.copy2(source, dest / part)
    return dest


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    """``lakewide ARGS`` through the console entry point: (exit code, stdout + stderr)."""
    code, out, err = run_main_streams(monkeypatch, capsys, *args)
    return code, out + err


def run_main_streams(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """``lakewide ARGS`` through the console entry point: (exit code, stdout, stderr), the
    exit code the process would end with."""
    monkeypatch.setattr(sys, "argv", ["lakewide", *args])
    try:
        from lakewide.cli import main

        main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def no_java_env() -> dict[str, str]:
    """This process's environment without Java: no JAVA_HOME, no PATH folder holding ``java``
    (lakewide from this repository)."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    folders = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in folders if d and not (Path(d) / "java").exists())
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    assert shutil.which("java", path=env["PATH"]) is None
    return env


def production_state(tmp_path: Path, files: dict[str, str | None]) -> Path:
    """The project of ``files`` under ``tmp_path/project``, its manifest.json written for the
    prod target and kept as ``tmp_path/prod-target`` (what ``--state`` takes); the project."""
    from lakewide.artifacts.manifest_json import write_manifest_json

    root = make_project(tmp_path / "project", files)
    write_manifest_json(manifest_of(root, target="prod"))
    shutil.copytree(root / "target", tmp_path / "prod-target")
    return root

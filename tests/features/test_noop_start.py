"""A run with nothing new ends before anything a run needs is loaded (issue 49, item 4): no Spark
layer and no JVM, no pyiceberg table model, and no model parsed again whose branch drivers were
found before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lakewide.compiler.plans import upstream
from lakewide.state.definition import definition_digest
from lakewide.state.nothing_new import fresh_models
from lakewide.vocabulary.errors import CompileError
from tests.state.test_table_readback import KEY_MODEL, build_state, project
from tests.support.project_factory import no_java_env

# the modules a lakewide process loaded, printed after its command ended
_LOADED = """\
import atexit, json, sys
atexit.register(lambda: print("LOADED " + json.dumps(sorted(sys.modules))))
from lakewide.cli import main
sys.argv = ["lakewide", *sys.argv[1:]]
main()
"""


def test_a_run_with_nothing_new_loads_no_spark_layer(tmp_path: Path) -> None:
    manifest = project(tmp_path / "p", {"m": KEY_MODEL})
    build_state(manifest, "m", definition_digest(manifest.models["m"]))
    env = {**no_java_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, "--project-dir", str(tmp_path / "p"), "run"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Nothing to do" in done.stdout
    loaded = json.loads(done.stdout.split("LOADED ", 1)[1])
    spark = [
        m
        for m in loaded
        if m.split(".")[0] in ("pyspark", "py4j")
        or m.startswith(("lakewide.spark", "lakewide.run.models.executor"))
    ]
    assert spark == []  # the executor imports the whole run layer and the Spark adapter
    # the tables' metadata files have the plain shape: read without pyiceberg's model
    assert "pyiceberg.table" not in loaded


def _counting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    analyzed: list[str] = []
    analyze = upstream.analyze

    def counted(node):  # type: ignore[no-untyped-def]
        analyzed.append(node.name)
        return analyze(node)

    monkeypatch.setattr(upstream, "analyze", counted)
    return analyzed


def test_the_noop_check_parses_an_unchanged_model_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    analyzed = _counting(monkeypatch, tmp_path)
    manifest = project(tmp_path / "p", {"m": KEY_MODEL})
    build_state(manifest, "m", definition_digest(manifest.models["m"]))
    assert fresh_models(manifest, ["m"]) == {"m"}
    assert fresh_models(project(tmp_path / "p", {"m": KEY_MODEL}), ["m"]) == {"m"}
    assert analyzed == ["m"]  # the second check (another process's, too) reads what it found
    # an edit finds them again: the drivers of the model as it is now
    edited = KEY_MODEL.replace("source('src', 'b')", "source('src', 'a')")
    node = project(tmp_path / "q", {"m": edited}).models["m"]
    assert upstream.branch_drivers(node) == [(0, "lw.src.a"), (1, "lw.src.a")]
    assert analyzed == ["m", "m"]


def test_a_model_that_does_not_analyze_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    analyzed = _counting(monkeypatch, tmp_path)
    broken = KEY_MODEL.replace("primary_key='k'", "primary_key='nope'")
    node = project(tmp_path / "p", {"m": broken}).models["m"]
    for _ in range(2):
        with pytest.raises(CompileError, match="nope"):
            upstream.branch_drivers(node)
    assert analyzed == ["m", "m"]
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_an_entry_that_is_not_drivers_is_found_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    analyzed = _counting(monkeypatch, tmp_path)
    node = project(tmp_path / "p", {"m": KEY_MODEL}).models["m"]
    drivers = upstream.branch_drivers(node)
    [entry] = (tmp_path / "cache").rglob("*.json")
    for text in ("[[0, 5]]", "{not json", '[["x", "lw.src.a"]]'):
        entry.write_text(text)
        assert upstream.branch_drivers(node) == drivers == [(0, "lw.src.a"), (1, "lw.src.b")]
    assert analyzed == ["m"] * 4

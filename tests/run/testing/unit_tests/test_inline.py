"""Which unit tests run on inline data (no JVM): the bootstrap plan of views, tables and key
tables; not the incremental plan, nor a model naming a warehouse table outright."""

from __future__ import annotations

from pathlib import Path

from lakewide.compiler.plans.upstream import compile_in
from lakewide.run.testing.unit_tests import load_unit_tests
from lakewide.run.testing.unit_tests.inline import runs_inline
from tests.run.testing.unit_tests.projects import group_project
from tests.support.project_factory import make_project, manifest_of

HARD_CODED = "{{ config(materialized='table') }}\nSELECT k FROM lw.elsewhere.t\n"


def test_bootstrap_tests_run_inline_incremental_ones_on_iceberg(tmp_path: Path) -> None:
    root = make_project(tmp_path, {**group_project(), "models/h.sql": HARD_CODED})
    manifest = manifest_of(root)
    tests = load_unit_tests(manifest)
    assert {t.plan for t in tests} == {"bootstrap", "incremental"}
    for test in tests:
        compiled = compile_in(manifest, manifest.models[test.model])
        assert runs_inline(compiled, test.plan) == (test.plan == "bootstrap"), test.name
    # a table reading a warehouse table by name: the scratch catalog, as before
    assert not runs_inline(compile_in(manifest, manifest.models["h"]), "bootstrap")

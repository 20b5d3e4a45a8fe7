"""Compiled templates are kept in the user's cache folder for the next process (jinja's
compiling was half of parsing a project), never in the project."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import Environment

from lakewide.project.render import template_cache
from tests.project_factory import copy_example_project, manifest_of


def test_the_next_process_reads_compiled_templates_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = copy_example_project(tmp_path / "example")
    first = manifest_of(root)
    kept = list(template_cache().glob("*.code"))
    assert template_cache() == tmp_path / "cache/lakewide/templates"
    assert len(kept) >= len(first.models)  # each model (and macro file) once
    assert not (root / "target").exists()  # nothing written into the project

    compile_ = Environment.compile

    def refuse(env: Environment, source: str, name: str | None = None, **kwargs: object) -> object:
        if name and name.startswith(("models/", "macros/")):  # (profiles.yml is no template)
            raise AssertionError(f"{name}: a cached template was compiled again")
        return compile_(env, source, name, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Environment, "compile", refuse)
    again = manifest_of(root)  # a new renderer, as in the next process
    assert {n: m.sql for n, m in again.models.items()} == {
        n: m.sql for n, m in first.models.items()
    }
    for entry in kept:  # an unreadable entry is compiled again
        entry.write_bytes(b"not code")
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert manifest_of(root).models.keys() == first.models.keys()

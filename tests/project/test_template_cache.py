"""Compiled templates are kept in the user's cache folder for the next process (jinja's
compiling was half of parsing a project), never in the project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from lakewide.project.render import Renderer, RenderResult, template_cache
from tests.support.project_factory import copy_example_project, manifest_of


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


def test_a_model_without_ref_is_rendered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second rendering resolves ref(): a model calling none, whose relation is the one
    guessed first, keeps its first rendering (the same text)."""
    root = copy_example_project(tmp_path / "example")
    expected = {n: m.sql for n, m in manifest_of(root).models.items()}
    rendered: list[str] = []
    render = Renderer.render

    def counted(self: Renderer, path: Path, *args: Any, **kwargs: Any) -> RenderResult:
        rendered.append(path.stem)
        return render(self, path, *args, **kwargs)

    monkeypatch.setattr(Renderer, "render", counted)
    manifest = manifest_of(root)
    assert {n: m.sql for n, m in manifest.models.items()} == expected
    for name, model in manifest.models.items():
        assert rendered.count(name) == (2 if model.refs else 1), name
    assert any(m.refs for m in manifest.models.values())

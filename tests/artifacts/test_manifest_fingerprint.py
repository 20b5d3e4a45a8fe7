"""manifest.json's compiled checksums: a model is compiled again only when something its
statements are made from changed (lakewide.artifacts.manifest_json, ``compiled_fingerprint``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakewide.artifacts import manifest_json
from lakewide.artifacts.manifest_json import manifest_document, write_manifest_json
from lakewide.vocabulary.errors import CompileError
from tests.support.project_factory import copy_example_project, manifest_of


def compiled(document: dict[str, Any]) -> dict[str, Any]:
    """Node name -> (checksum, fingerprint) of the models that compiled."""
    return {
        n["name"]: (n["compiled_checksum"]["checksum"], n["compiled_fingerprint"])
        for n in document["nodes"].values()
        if n.get("compiled_checksum")
    }


@pytest.fixture
def example(tmp_path: Path) -> Path:
    project = copy_example_project(tmp_path / "example")
    write_manifest_json(manifest_of(project))
    return project


def refuse_to_compile(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every compile from now on fails, and is recorded."""
    compiled_names: list[str] = []

    def failing(manifest: Any, node: Any) -> Any:
        compiled_names.append(node.name)
        raise CompileError("compiled again", model=node.name)

    monkeypatch.setattr(manifest_json, "compile_in", failing)
    return compiled_names


def test_an_unchanged_project_reuses_every_checksum(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = compiled(manifest_document(manifest_of(example)))
    assert before and len(before) >= 3
    compiles = refuse_to_compile(monkeypatch)
    assert compiled(manifest_document(manifest_of(example))) == before
    assert compiles == []


def test_an_edited_model_and_new_code_compile_again(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = compiled(manifest_document(manifest_of(example)))
    model = example / "models" / "wide" / "user_rec_wide.sql"
    model.write_text(model.read_text().replace("imp_cnt", "imp_cnt + 1", 1))
    compiles = refuse_to_compile(monkeypatch)
    after = compiled(manifest_document(manifest_of(example)))
    assert compiles == ["user_rec_wide"]
    assert "user_rec_wide" not in after
    assert after == {k: v for k, v in before.items() if k != "user_rec_wide"}

    compiles.clear()  # lakewide's code changed: nothing is reused
    monkeypatch.setattr(manifest_json, "code_digest", lambda: "other code")
    manifest_document(manifest_of(example))
    assert sorted(compiles) == sorted(before)


def test_a_config_change_around_a_model_compiles_it_again(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's statements also follow the models around it: whether the model it reads
    produces a changelog changes how it reads it, so its fingerprint changes with that."""
    manifest = manifest_of(example)
    node = manifest.models["order_status_counts"]
    fingerprint = manifest_json.compiled_fingerprint(manifest, node)
    parent = example / "models" / "wide" / "order_detail.sql"
    text = parent.read_text()
    assert "changelog_producer" not in text
    parent.write_text(text.replace("config(", "config(changelog_producer='lookup', ", 1))
    edited = manifest_of(example)
    assert manifest_json.compiled_fingerprint(edited, edited.models["order_status_counts"]) != (
        fingerprint
    )

"""Load every model of a project: discover files, render twice (configs, then refs), build nodes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lakewide.project.config.kinds import names_a_view
from lakewide.project.config.model_config import SnapshotConfig, parse_model_config
from lakewide.project.data_tests import (
    DataTest,
    by_name,
    collect_generic_tests,
    load_singular_tests,
)
from lakewide.project.model_properties import ModelProperties, load_model_properties
from lakewide.project.nodes import ModelNode, Relation
from lakewide.project.profiles import Output
from lakewide.project.render import Renderer, RenderResult, template_cache
from lakewide.project.settings import Project
from lakewide.project.sources import Source, load_sources
from lakewide.project.text_files import read_utf8
from lakewide.vocabulary.errors import ConfigError


@dataclass
class Manifest:
    """All models (by name) and sources of a project, for one profile output."""

    project: Project
    output: Output
    models: dict[str, ModelNode]
    sources: dict[tuple[str, str], Source]
    properties: dict[str, ModelProperties] = field(default_factory=dict)  # models/*.yml
    data_tests: dict[str, DataTest] = field(default_factory=dict)
    # ``state:`` selector -> the models it selects (``--state``; None without it)
    state: dict[str, frozenset[str]] | None = None
    # ``--defer``: seed name -> the table it is loaded into, None: not loaded (production's
    # table is read); None: every seed into its own table (lakewide.project.seeds)
    seed_tables: dict[str, Relation | None] | None = None


def _files(folders: list[Path], pattern: str) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            found.extend(sorted(folder.rglob(pattern)))
    return found


def load_manifest(
    project: Project,
    output: Output,
    *,
    variables: dict[str, Any] | None = None,
    incremental: set[str] | None = None,
    deferred: dict[str, Relation] | None = None,
    tables_instead: dict[str, Relation] | None = None,
) -> Manifest:
    """Render all models. ``incremental`` names the models whose ``is_incremental()`` is true;
    ``deferred`` maps models to the relations their ``ref()`` stands for instead of their own
    (``--defer``: another target's tables, read, never written); ``tables_instead`` maps the
    key of a source's table to the table its ``source()`` stands for (``--defer``: a seed
    changed since the state, loaded into the target's own namespace)."""
    yml_files = _files(project.model_paths, "*.yml") + _files(project.model_paths, "*.yaml")
    sources = load_sources(yml_files, output.catalog)
    for key, source in sources.items():
        instead = (tables_instead or {}).get(source.relation.key)
        if instead is not None:
            sources[key] = replace(source, relation=instead)
    renderer = Renderer(
        _files(project.macro_paths, "*.sql"),
        {**project.vars, **(variables or {})},
        sources,
        cache=template_cache(),
    )
    paths: dict[str, Path] = {}
    for path in _files(project.model_paths, "*.sql"):
        name = path.stem
        if name in paths:
            raise ConfigError(
                f"two models are named '{name}': {project.relative(paths[name])} and "
                f"{project.relative(path)}; model names must be unique",
                path=path,
            )
        paths[name] = path
    texts = {name: read_utf8(path, project.relative(path)) for name, path in paths.items()}

    def placeholder(name: str) -> str:
        return name

    first: dict[str, RenderResult] = {}
    relations: dict[str, Relation] = {}
    guesses: dict[str, Relation] = {}
    for name, path in paths.items():
        guess = guesses[name] = Relation(output.catalog, output.namespace, name)
        shown = Path(project.relative(path))
        first[name] = renderer.render(shown, texts[name], resolve_ref=placeholder, this=guess)
        config = first[name].config
        alias = str(config.get("alias") or name)
        if names_a_view(config.get("materialized")) and output.catalog_type == "hadoop":
            relations[name] = Relation("", "", alias)  # the hadoop catalog has no views
        else:
            relations[name] = Relation(
                output.catalog, str(config.get("schema") or output.namespace), alias
            )
        relations[name] = (deferred or {}).get(name, relations[name])

    def resolve(name: str) -> Relation:
        if name not in relations:
            raise ConfigError(f"ref('{name}') names no model; models: {', '.join(sorted(paths))}")
        return relations[name]

    models: dict[str, ModelNode] = {}
    for name, path in paths.items():
        again = (
            first[name].refs or relations[name] != guesses[name] or name in (incremental or set())
        )
        # no ref(), the same `this`: rendering again would give the same text
        result = (
            first[name]
            if not again
            else renderer.render(
                Path(project.relative(path)),
                texts[name],
                resolve_ref=resolve,
                this=relations[name],
                is_incremental=name in (incremental or set()),
            )
        )
        for ref_name in result.refs:
            resolve(ref_name)
        model_config = parse_model_config(
            result.config, path=project.relative(path), line=result.config_line, model=name
        )
        if not model_config.enabled:
            continue
        models[name] = ModelNode(
            name=name,
            path=path,
            raw_sql=texts[name],
            sql=result.sql,
            config=model_config,
            relation=relations[name],
            refs=list(dict.fromkeys(result.refs)),
            sources=list(dict.fromkeys(result.sources)),
            config_line=result.config_line,
        )
    for node in models.values():
        disabled = [r for r in node.refs if r not in models]
        if disabled:
            raise ConfigError(
                f"ref('{disabled[0]}') points at a disabled model",
                path=project.relative(node.path),
                model=node.name,
            )
    snapshots = {
        n.relation.key: n.config.temporal_columns()
        for n in models.values()
        if isinstance(n.config, SnapshotConfig)
    }
    for node in models.values():
        node.snapshots = snapshots
    properties = load_model_properties(
        yml_files, set(paths), {p: project.relative(p) for p in yml_files}
    )

    def relative(path: Path) -> Path:
        return Path(project.relative(path))

    def render_test(path: Path, text: str) -> tuple[str, dict[str, Any], list[str]]:
        this = Relation(output.catalog, output.namespace, path.stem)
        result = renderer.render(relative(path), text, resolve_ref=resolve, this=this)
        disabled = [r for r in result.refs if r not in models]
        if disabled:
            raise ConfigError(
                f"ref('{disabled[0]}') points at a disabled model", path=relative(path)
            )
        return result.sql, result.config, result.refs

    data_tests = by_name(
        collect_generic_tests(properties, models, sources, set(paths), relative)
        + load_singular_tests(project.test_paths, render_test, relative)
    )
    return Manifest(project, output, models, sources, properties, data_tests)

"""Comparing the project with an earlier run's ``manifest.json`` (``--state DIR``).

Each model node of ``manifest.json`` stores two *state digests* that do not depend on the
target the manifest was written for, so a production ``target/`` and a pull request's project
compare model by model:

* ``body``: the rendered query as sqlglot tokens (``lakewide.state.definition``: whitespace,
  comments and keyword case do not count; macros, vars and literals do, through rendering),
  with the relation of every ``ref()``, ``source()`` and ``this`` replaced by its name, so a
  dev target's namespace is not a change;
* ``configs``: the model's config (every key that differs from its default, tags and
  descriptions included) and its materialization.

A model is ``state:modified`` when either differs, ``state:new`` when the state has no model of
its name. A change of an upstream model changes no digest: ``state:modified+`` selects the
models downstream of one. A model reading a seed whose CSV changed is ``state:modified`` too
(lakewide.artifacts.seed_state).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakewide import __version__
from lakewide.artifacts.seed_state import StateSeed, modified_seeds, seed_readers, state_seeds
from lakewide.project.manifest import Manifest, load_manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.definition import normalized_tokens
from lakewide.vocabulary.errors import ConfigError

#: the shape of the state digests in ``manifest.json`` (metadata ``state_version``)
STATE_VERSION = 1


def _sha256(document: Any) -> str:
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _named_relations(manifest: Manifest, node: ModelNode) -> dict[str, str]:
    """Relation key -> the name it stands for in ``node``'s query (ref, source, this)."""
    names = {node.relation.key: "this"}
    for ref in node.refs:
        if ref in manifest.models:
            names[manifest.models[ref].relation.key] = f"ref {ref}"
    for key in node.sources:
        if key in manifest.sources:
            names[manifest.sources[key].relation.key] = f"source {key[0]}.{key[1]}"
    return names


def _body_tokens(manifest: Manifest, node: ModelNode) -> list[str]:
    """The query's tokens, each dotted name that is a relation of the model replaced by its name."""
    tokens = normalized_tokens(node.sql)
    names = _named_relations(manifest, node)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if not _is_name(tokens[i]):
            out.append(tokens[i])
            i += 1
            continue
        end = i  # the dotted name NAME (DOT NAME)* starting at i ends at ``end``
        while end + 2 < len(tokens) and tokens[end + 1] == "DOT ." and _is_name(tokens[end + 2]):
            end += 2
        key = ".".join(t.split(" ", 1)[1] for t in tokens[i : end + 1 : 2]).lower()
        out.extend([names[key]] if key in names else tokens[i : end + 1])
        i = end + 1
    return out


def _is_name(token: str) -> bool:
    return token.startswith(("VAR ", "IDENTIFIER "))


def state_digests(manifest: Manifest, node: ModelNode) -> dict[str, str]:
    """The node's ``body`` and ``configs`` digests (see the module doc)."""
    configs = {
        "kind": node.config.kind,
        "config": node.config.model_dump(mode="json", exclude_defaults=True),
    }
    return {"body": _sha256(_body_tokens(manifest, node)), "configs": _sha256(configs)}


@dataclass(frozen=True)
class StateModel:
    """One model as the state's ``manifest.json`` recorded it."""

    name: str
    relation: Relation
    digests: dict[str, str]
    node: dict[str, Any]


@dataclass(frozen=True)
class State:
    """The earlier run ``--state`` names: its models and where its manifest is."""

    path: Path
    models: dict[str, StateModel]
    catalog: str
    document: dict[str, Any]
    seeds: dict[str, StateSeed] | None = None  # None: a manifest recording no seeds
    namespace: str = ""  # the default namespace of the state's target ("" when not recorded)
    target: str = ""  # the name of the state's target ("" when not recorded)


def _refuse(path: Path, problem: str) -> ConfigError:
    return ConfigError(
        f"--state {path}: {problem}; --state takes the target/ folder of an earlier lakewide "
        "run or compile (it holds manifest.json), e.g. --state prod-target",
    )


def load_state(path: Path) -> State:
    """The models of ``path/manifest.json``; a ConfigError naming the path when it is missing,
    not JSON, or written by a lakewide that stores no state digests of this version."""
    if not path.exists():
        raise _refuse(path, "no such directory")
    if not path.is_dir():
        raise _refuse(path, "not a directory")
    file = path / "manifest.json"
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _refuse(path, "holds no manifest.json") from None
    except (OSError, UnicodeDecodeError) as err:
        raise _refuse(path, f"manifest.json cannot be read ({err})") from None
    except ValueError as err:
        raise _refuse(path, f"manifest.json is not valid JSON ({err})") from None
    metadata = document.get("metadata") if isinstance(document, dict) else None
    if not isinstance(metadata, dict) or metadata.get("state_version") != STATE_VERSION:
        found = metadata.get("state_version") if isinstance(metadata, dict) else None
        version = metadata.get("lakewide_version") if isinstance(metadata, dict) else None
        raise _refuse(
            path,
            f"manifest.json was written by {f'lakewide {version}' if version else 'another tool'}"
            f" with state_version {found} (this lakewide {__version__} reads state_version "
            f"{STATE_VERSION}); write it again with this lakewide (`lakewide compile` in the "
            "production project)",
        )
    models: dict[str, StateModel] = {}
    try:
        for node in document["nodes"].values():
            if node.get("resource_type") != "model":
                continue
            relation = Relation(node["database"] or "", node["schema"] or "", node["alias"])
            models[node["name"]] = StateModel(node["name"], relation, node["state"], node)
    except (KeyError, TypeError, AttributeError) as err:
        raise _refuse(path, f"manifest.json has a model node without {err}") from None
    try:
        seeds = state_seeds(document)
    except (KeyError, TypeError, AttributeError) as err:
        raise _refuse(path, f"manifest.json has a seed node without {err}") from None
    return State(
        path,
        models,
        str(metadata.get("catalog") or ""),
        document,
        seeds,
        namespace=str(metadata.get("namespace") or ""),
        target=str(metadata.get("target_name") or ""),
    )


def compare(manifest: Manifest, state: State) -> dict[str, frozenset[str]]:
    """What each ``state:`` selector selects: method -> model names
    (``lakewide.project.graph.STATE_METHODS``)."""
    new: set[str] = set()
    body: set[str] = set()
    configs: set[str] = set()
    for name, node in manifest.models.items():
        before = state.models.get(name)
        if before is None:
            new.add(name)
            continue
        now = state_digests(manifest, node)
        if now["body"] != before.digests.get("body"):
            body.add(name)
        if now["configs"] != before.digests.get("configs"):
            configs.add(name)
    seeded = seed_readers(manifest, modified_seeds(manifest, state.seeds))
    return {
        "new": frozenset(new),
        "modified": frozenset(new | body | configs | seeded),
        "modified.body": frozenset(new | body),
        "modified.configs": frozenset(new | configs),
        "modified.seeds": frozenset(seeded),
    }


def deferred_relations(manifest: Manifest, state: State, names: list[str]) -> dict[str, Relation]:
    """``--defer``: model -> the state's table, for each model not in ``names`` whose table in
    the state is another one than this target's (a model new since the state, or a session
    view of the state's run, keeps its own). A ConfigError when the state's table is in another
    catalog: Spark reads it through the current target's catalog."""
    chosen = set(names)
    deferred: dict[str, Relation] = {}
    for name, node in manifest.models.items():
        before = state.models.get(name)
        if name in chosen or before is None or before.relation == node.relation:
            continue
        if not before.relation.catalog:
            continue  # a session view lives only in the session that made it
        if before.relation.catalog.lower() != manifest.output.catalog.lower():
            raise ConfigError(
                f"--defer: model {name}'s table in --state {state.path} is {before.relation}, in "
                f"catalog {before.relation.catalog}, but this target's catalog is "
                f"{manifest.output.catalog}; deferred tables are read through this target's "
                "catalog: give both targets the same catalog (their namespaces may differ)",
                key="--defer",
            )
        deferred[name] = before.relation
    return deferred


def state_relations(state: State) -> dict[str, Relation]:
    """Model -> the table the state records for it (a session view, which has none, left out)."""
    return {name: model.relation for name, model in state.models.items() if model.relation.catalog}


def rendered_as_state(manifest: Manifest, state: State, variables: dict[str, Any]) -> Manifest:
    """``manifest`` rendered as the state's target renders it: each ``ref()`` and ``this`` names
    the table the state records for the model (a model new since the state: its table in the
    state's namespace), each ``source()`` without a catalog of its own the state's catalog; so a
    model's contract compares with the one the state's run stored, whichever target this is.
    ``manifest`` itself when the two render alike (``variables``: the ``--vars`` given)."""
    output = manifest.output.model_copy(
        update={
            "catalog": state.catalog or manifest.output.catalog,
            "namespace": state.namespace or manifest.output.namespace,
        }
    )
    relations = state_relations(state)
    if (output.catalog, output.namespace) == (
        manifest.output.catalog,
        manifest.output.namespace,
    ) and all(
        node.relation == relations.get(n, node.relation) for n, node in manifest.models.items()
    ):
        return manifest
    again = load_manifest(manifest.project, output, variables=variables, deferred=relations)
    again.state = manifest.state
    return again

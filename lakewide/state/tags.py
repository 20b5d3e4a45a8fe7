"""Per-run Iceberg tags: after ``run``/``build``, one tag (``lw-run-<run id>`` or a name the user
gives) on the snapshot of each selected model that belongs to a consistent set, so that
``SELECT ... FROM a VERSION AS OF 'tag' JOIN b VERSION AS OF 'tag'`` reads versions built from
the same upstream snapshots (lakewide.state.consistency defines "the same").

Which models get the tag: those that succeeded in the run (committed, or had nothing new: their
current snapshot was built from the upstream snapshots the run saw), in run order, each only
when its current snapshot's lineage agrees with the lineages of the models tagged before it. A
model that failed or was skipped is never tagged: its table still holds a snapshot an earlier run
built, maybe from other inputs. Views have no snapshots.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from lakewide.project.durations import Retention
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.consistency import Lineage, Lineages, commit_behind, disagreement, shown
from lakewide.state.offsets import TableMeta
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError

#: what a tag name may be: letters, digits, ``_ . -``, starting with a letter or digit
TAG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")
TAG_NAME_FORM = "1-200 letters, digits, '_', '.' or '-', starting with a letter or digit"


def run_tag_name(run_id: str) -> str:
    """The tag a run gives when the user names none."""
    return f"lw-run-{run_id}"


def check_tag_name(name: str) -> str:
    """``name`` when it can name a tag; ConfigError saying what is accepted otherwise."""
    if not TAG_NAME.fullmatch(name) or name == "main":
        raise ConfigError(
            f"tag name {name!r} is not accepted: use {TAG_NAME_FORM} ('main' is the table's branch)"
        )
    return name


def _alter(relation: Relation, *words: str) -> exp.Command:
    """``ALTER TABLE <relation> <words>``: sqlglot has no node for Iceberg's tag DDL, so the
    text is assembled from a generated table name, quoted identifiers, integers and keywords."""
    return exp.Command(
        this="ALTER", expression=" ".join(("TABLE", relation.table().sql(DIALECT), *words))
    )


def _quoted(name: str) -> str:
    return exp.to_identifier(check_tag_name(name), quoted=True).sql(DIALECT)


def create_tag(
    relation: Relation, name: str, snapshot: int, retention: Retention, replace: bool
) -> exp.Command:
    """``ALTER TABLE t CREATE [OR REPLACE] TAG `name` AS OF VERSION id [RETAIN n DAYS]``."""
    words = ["CREATE OR REPLACE TAG" if replace else "CREATE TAG", _quoted(name)]
    words += ["AS OF VERSION", str(int(snapshot))]
    if retention.amount is not None:
        words += ["RETAIN", str(int(retention.amount)), retention.unit]
    return _alter(relation, *words)


def drop_tag(relation: Relation, name: str) -> exp.Command:
    """``ALTER TABLE t DROP TAG IF EXISTS `name```."""
    return _alter(relation, "DROP TAG IF EXISTS", _quoted(name))


@dataclass
class TagSet:
    """The models a run tags (model -> snapshot) and why the others are not tagged."""

    tagged: dict[str, int] = field(default_factory=dict)
    left: dict[str, str] = field(default_factory=dict)


def tables(manifest: Manifest) -> dict[str, ModelNode]:
    """The models kept as catalog tables, by relation key."""
    return {
        n.relation.key: n
        for n in manifest.models.values()
        if n.relation.catalog and n.config.kind.stores_rows
    }


def model_lineages(
    manifest: Manifest, table_meta: Callable[[Relation], TableMeta | None]
) -> Lineages:
    """Lineages of the project's tables, read with ``table_meta`` (sources are not followed)."""
    known = tables(manifest)
    return Lineages(lambda key: table_meta(known[key].relation) if key in known else None)


def consistent_set(
    manifest: Manifest, outcomes: Iterable[tuple[str, str]], lineages: Lineages
) -> TagSet:
    """Which of the run's models (``(name, status)`` in run order) carry the tag: see the
    module's docstring."""
    found = TagSet()
    agreed: Lineage = {}
    for name, status in outcomes:
        node = manifest.models[name]
        if not node.config.kind.stores_rows or not node.relation.catalog:
            continue
        if status != "success":
            found.left[name] = (
                f"{status} in this run: its table holds a snapshot of an earlier run, "
                "maybe built from other inputs"
            )
            continue
        key = node.relation.key
        meta = lineages.meta(key)
        if meta is None or meta.current is None or commit_behind(meta, meta.current) is None:
            found.left[name] = "no lakewide commit in its table"
            continue
        lineage = lineages.of(key, meta.current)
        clash = disagreement(agreed, lineage)
        if clash is not None:
            found.left[name] = (
                f"its snapshot {meta.current} was built from {clash} at "
                f"{shown(lineage[clash])}, the models tagged before it from {shown(agreed[clash])}"
            )
            continue
        found.tagged[name] = meta.current
        agreed.update(lineage)
    return found


def tagged_tables(manifest: Manifest, name: str, lineages: Lineages) -> dict[str, int]:
    """The project's tables that carry tag ``name``: model -> snapshot."""
    carrying = {}
    for key, node in tables(manifest).items():
        meta = lineages.meta(key)
        if meta is not None and name in meta.tags:
            carrying[node.name] = meta.tags[name]
    return carrying


def refuse_existing(manifest: Manifest, name: str, lineages: Lineages) -> None:
    """ConfigError (nothing run) when a table of the project already carries tag ``name``."""
    carrying = tagged_tables(manifest, name, lineages)
    if carrying:
        held = ", ".join(
            f"{manifest.models[m].relation} (snapshot {s})" for m, s in sorted(carrying.items())
        )
        raise ConfigError(
            f"tag {name!r} exists already on {held}; give another --tag, or --replace-tag "
            "to move it to this run's snapshots (and drop it from the tables this run does "
            "not tag)"
        )

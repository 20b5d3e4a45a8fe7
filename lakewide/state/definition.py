"""A digest of each model's definition, stored with every commit lakewide makes to its table.

A table built from one definition cannot take the incremental plan of another (a new column is
a raw ``UNRESOLVED_COLUMN`` in the MERGE), and the no-op check must not call an edited model
"unchanged". So every lakewide commit carries ``lakewide.definition`` and every run compares it:

* key tables whose definition changed refuse to run (``--full-refresh`` rebuilds them);
* ``table`` models are rebuilt every run anyway: a changed digest only means "not fresh".

What goes in: the rendered query as a stream of sqlglot tokens (so whitespace, comments,
keyword case and jinja layout do not count; macros, vars and source names do, through the
rendering; identifiers, literals and every other token do), the materialization, the target
relation, every config key that differs from its default except the cosmetic ones, and
``LAYOUT_VERSION``. The compiled statements are a function of exactly these plus lakewide's
compiler, so any edit that changes them changes the digest, while an upgrade of lakewide that
only reshapes the SQL it generates does not force a rebuild. Tokenizing costs about a tenth of
parsing and printing (a tiny part of compiling), which keeps the no-op check cheap for large
projects; the price is that a few edits that leave the tree unchanged (optional ``AS``,
redundant parentheses) also count as changes.

Tables without a stored digest (built before lakewide stored one) are accepted as they are; the
next commit stores the current digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import TokenType
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError

from lakewide import __version__
from lakewide.project.manifest import Manifest
from lakewide.project.nodes import ModelNode, Relation
from lakewide.state.offsets import DEFINITION, VERSION, TableMeta, last_commit
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError

# Bump when lakewide changes the layout of the tables it builds (hidden columns, types, ...) so
# that a table built before the change can no longer take the new incremental plan.
LAYOUT_VERSION = 3  # 2: hidden version and row-count columns (docs/concepts/run-boundaries.md)
# 3: non-null input counts of sum/product columns in aggregation models without row kinds

# Config keys that change neither the table nor any statement lakewide runs on it.
# changelog_producer adds a table next to the model's but changes neither the model's table nor
# its MERGE: a downstream read falls back where the changelog does not cover its range.
# maintenance, retention and ttl say what ``lakewide maintain`` does to the table, not what a
# run writes; freshness says when ``run --watch`` refreshes it; on_schema_change how a change
# of the model is applied, not what the table holds.
_COSMETIC = frozenset(
    {"tags", "description", "enabled", "materialized", "changelog_producer", "freshness"}
    | {"maintenance", "retention", "ttl", "on_schema_change", "refresh_mode"}
)

# Tokens whose text is a name or a value (kept exactly); all others are keywords and symbols.
_EXACT = frozenset(
    getattr(TokenType, name)
    for name in (
        "VAR",
        "IDENTIFIER",
        "NUMBER",
        "STRING",
        "BIT_STRING",
        "HEX_STRING",
        "BYTE_STRING",
        "NATIONAL_STRING",
        "NATIONAL_RAW_STRING",
        "RAW_STRING",
        "HEREDOC_STRING",
        "UNICODE_STRING",
    )
    if hasattr(TokenType, name)
)

MetaReader = Callable[[Relation], "TableMeta | None"]


def definition_digest(node: ModelNode) -> str:
    """SHA-256 (hex) of what a model's compiled statements are made from (see module doc)."""
    config = node.config.model_dump(mode="json", exclude_defaults=True, exclude=set(_COSMETIC))
    document = {
        "layout": LAYOUT_VERSION,
        "kind": node.config.kind,
        "relation": str(node.relation),
        "config": config,
        "query": normalized_tokens(node.sql),
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalized_tokens(sql: str) -> list[str]:
    """The query's tokens as ``TYPE text``: names and values exactly, keywords upper-cased.

    SQL that does not tokenize (it will not compile either) counts by its exact text.
    """
    try:
        tokens = Dialect.get_or_raise(DIALECT).tokenize(sql)
    except TokenError:
        return [sql]
    return [
        f"{t.token_type.name} "
        + (t.text if t.token_type in _EXACT else " ".join(t.text.upper().split()))
        for t in tokens
    ]


def stored_digest(meta: TableMeta | None) -> str | None:
    """The digest stored by the table's last lakewide commit; None when there is none."""
    snapshot = last_commit(meta)
    return None if snapshot is None else snapshot.summary.get(DEFINITION)


def definition_changed(node: ModelNode, meta: TableMeta | None) -> bool:
    """Whether the table holds a digest and it differs from the model's current one."""
    stored = stored_digest(meta)
    return stored is not None and stored != definition_digest(node)


@dataclass(frozen=True)
class ChangedModel:
    """A key-table model whose table was built from another definition."""

    name: str
    path: str
    relation: str
    built_by: str  # the lakewide version that wrote the table's last commit ("" if unknown)


class DefinitionChangedError(ConfigError):
    """Models whose definition changed since their tables were built (exit code 2)."""

    def __init__(self, changed: list[ChangedModel]) -> None:
        self.changed = changed
        super().__init__(_message(changed))


def _message(changed: list[ChangedModel]) -> str:
    upgraded = sorted({c.built_by for c in changed if c.built_by and c.built_by != __version__})
    note = (
        f"; lakewide {', '.join(upgraded)} built it, and a change of lakewide's table "
        "layout counts too"
        if upgraded
        else ""
    )
    selectors = " ".join(f"-s {c.name}" for c in changed)
    if len(changed) == 1:
        c = changed[0]
        head = f"model {c.name} ({c.path}) changed since its table {c.relation} was built"
    else:
        head = f"{len(changed)} models changed since their tables were built: " + ", ".join(
            f"{c.name} ({c.path}, table {c.relation})" for c in changed
        )
    return (
        f"{head}: the SQL or config differs from the definition stored with the table "
        f"(columns, branches, filters, keys or options){note}. The incremental plan cannot "
        "run on a table built from another definition, so nothing was run. lakewide does "
        f"not migrate tables yet; rebuild with `lakewide run --full-refresh {selectors}`."
    )


def changed_models(manifest: Manifest, names: list[str], meta_of: MetaReader) -> list[ChangedModel]:
    """Selected key-table models whose stored definition digest differs from the current one.

    ``meta_of`` returns a table's metadata (None when missing or unreadable: such a table is
    the run's own business, not this check's).
    """
    found = []
    for name in names:
        node = manifest.models[name]
        if not node.config.kind.is_key_table:
            continue
        meta = meta_of(node.relation)
        if definition_changed(node, meta):
            snapshot = last_commit(meta)
            built_by = snapshot.summary.get(VERSION, "") if snapshot else ""
            found.append(
                ChangedModel(
                    name, manifest.project.relative(node.path), str(node.relation), built_by
                )
            )
    return found


def refuse_changed_models(manifest: Manifest, names: list[str], meta_of: MetaReader) -> None:
    """Raise DefinitionChangedError naming each selected key table built from another definition."""
    changed = changed_models(manifest, names, meta_of)
    if changed:
        raise DefinitionChangedError(changed)

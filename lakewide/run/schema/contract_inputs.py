"""What a key table's contract types were analysed from, so that a run need not analyse again.

A model's contract holds the Spark type of every table column (lakewide.compiler.schema.contract),
which only Spark's analysis of the model's whole bootstrap query gives. At width that analysis
is the cost of planning the widest statement lakewide has, and a run made it twice (the schema
check before the models run, and the model's own run). The types are a function of the query
(of the model's definition and the lakewide version that compiled it) and of the schemas of
the tables it reads, so the digest of those (``inputs_digest``; not of the query's text, whose
printing costs a third of an analysis at 32 x 16) is stored
next to the contract (table property ``lakewide.contract-inputs``): a run whose digest equals
the stored one takes the types from the stored contract instead of analysing.

The digest is made only where every upstream's schema is known without Spark (the catalogs
lakewide reads metadata of, lakewide.state.readers) and the snapshot a run reads of each is
written with the table's current schema; elsewhere there is no digest and the query is
analysed, as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlglot import exp

from lakewide import __version__
from lakewide.project.nodes import Relation
from lakewide.state.definition import definition_digest
from lakewide.state.offsets import TableMeta

if TYPE_CHECKING:
    from lakewide.compiler import CompiledModel
    from lakewide.spark.adapter import SparkAdapter


def inputs_digest(
    definition: str,
    upstreams: Mapping[Relation, tuple[TableMeta | None, int | None]],
    spark_version: str,
) -> str | None:
    """SHA-256 (hex) of the model's ``definition`` (its definition digest: its query's
    tokens, its config, its relation; lakewide.state.definition), the lakewide version that
    compiled it, each upstream's current schema (``upstreams``: relation -> its metadata and
    the snapshot the run reads) and the Spark version; None when an upstream's schema is not
    known without Spark, or the snapshot read was written with another schema than the
    table's current one."""
    schemas = []
    for relation in sorted(upstreams, key=str):
        meta, snapshot = upstreams[relation]
        if meta is None or meta.columns is None or meta.schema_id is None:
            return None
        if snapshot is not None:
            found = meta.snapshots.get(snapshot)
            if found is None or found.schema_id != meta.schema_id:
                return None
        schemas.append([str(relation), [[c.name, c.type] for c in meta.columns]])
    document = {
        "definition": definition,
        "lakewide": __version__,
        "upstreams": schemas,
        "spark": spark_version,
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_digest(
    adapter: SparkAdapter,
    compiled: CompiledModel,
    metas: Mapping[str, TableMeta | None] | None = None,
    definition: str | None = None,
) -> str | None:
    """``inputs_digest`` of a key table over its upstreams at their current snapshots
    (``metas``: the upstreams' metadata by plan key, as a run pinned them; else read;
    ``definition``: the model's definition digest when known); None for a model without a
    bootstrap query."""
    bootstrap = compiled.bootstrap
    if compiled.kind.is_view or not isinstance(bootstrap, exp.Create):
        return None
    if not isinstance(bootstrap.expression, exp.Query):
        return None
    if definition is None:
        definition = definition_digest(compiled.node)
    upstreams: dict[Relation, tuple[TableMeta | None, int | None]] = {}
    # the tables a run pins (its plans' pins), read from the plan context: building every
    # plan of a wide model only for their names would cost what the run's planning costs
    for key, relation in compiled.context.upstream.items():
        known = metas is not None and key in metas
        meta = metas[key] if metas is not None and known else adapter.table_meta(relation)
        upstreams[relation] = (meta, None if meta is None else meta.current)
    return inputs_digest(definition, upstreams, adapter.spark_version)

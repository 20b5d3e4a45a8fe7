"""What the one-shuffle bootstrap's NULL placeholders cost Spark's planning, by width.

    python benchmarks/width_placeholders.py --sources 16,32,64 --engines agg,pu_groups

The bootstrap of aggregation and sequence groups (``folds/one_shuffle.py``) puts the
per-source folds together with a UNION ALL of ``(k, STRUCT(fold's columns))`` rows, one struct
column per source: each branch carries one NULL for every other source, S(S-1) in all. Per
shape and engine, on tiny tables (planning only), the least JVM CPU of ``--repeat``
``EXPLAIN``s of:

* ``compiled``: the bootstrap SELECT as compiled (S - 1 NULLs a branch);
* ``payload``: the same with one common payload instead: each branch ``(k, i, STRUCT(p0, p1,
  ...))`` (the fold's columns by position; the benchmark's sources have the same types at the
  same positions) with no NULL, grouped by ``k`` with ``FIRST(IF(src = i, payload, NULL),
  TRUE)`` per source (linear in the sources; a rewrite for this benchmark's shapes only);
* ``union``: the union and grouping alone (``SELECT * FROM`` the grouped rows), placeholders
  as compiled, and ``union_payload`` the same of the payload form;
* ``typed``: the bootstrap as a run sends it: compiled again with the folds' column types,
  taken from Spark's analysis of the compiled bootstrap with each fold's struct as an output
  (the run's analysis for the contract: ``one_shuffle.with_fold_structs``), each branch
  ``(k, i, slots)``, a slot per column of one type, no NULL per other source (exact for any
  types); ``union_typed`` its union and grouping alone.

A bootstrap that LEFT JOINs its folds to their keys (partial_update with a sequence field,
deduplicate, first_row) is planned beside ``shuffled``: the same folds put together by one
shuffle as ``one_shuffle`` does (with its placeholders). Both forms' rows are compared
(``EXCEPT ALL`` both ways). Writes ``benchmarks/results/width_placeholders[_<name>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402
from sqlglot import exp  # noqa: E402
from width import bound  # noqa: E402
from width_models import Shape  # noqa: E402
from width_setup import manifest_of, open_spark, start_shape, write_round  # noqa: E402

from lakewide.compiler import PlanContext, analyze, compile_model  # noqa: E402
from lakewide.compiler.folds import one_shuffle  # noqa: E402
from lakewide.compiler.folds.build_prefolds import KEYS  # noqa: E402
from lakewide.compiler.model.versions import ROW_VERSION  # noqa: E402

SOURCE = "__lw_src"
PAYLOAD = "__lw_p"


def grouped_of(query: exp.Select) -> exp.Select:
    """The compiled bootstrap's grouped rows (``FROM (SELECT k, FIRST(...) ...) AS keys``)."""
    sub = query.args["from_"].this
    assert isinstance(sub, exp.Subquery) and isinstance(sub.this, exp.Select)
    return sub.this


def payload_form(query: exp.Select) -> exp.Select:
    """``query`` with each union branch as ``(k, i, STRUCT(p0, ...))``, no placeholder."""
    q = query.copy()
    grouped = grouped_of(q)
    union = grouped.args["from_"].this.this
    branches: list[exp.Select] = []
    node: exp.Expr = union
    while isinstance(node, exp.Union):
        branches.insert(0, node.expression)
        node = node.this
    branches.insert(0, node)  # type: ignore[arg-type]
    positions: dict[str, dict[str, str]] = {}  # struct column -> field -> position
    rebuilt: exp.Query | None = None
    for i, branch in enumerate(branches):
        keys = [e for e in branch.expressions if isinstance(e, exp.Column)]
        own = next(e for e in branch.expressions if isinstance(e.this, exp.Struct))
        fields = own.this.expressions
        positions[own.alias] = {f.alias: f"p{n}" for n, f in enumerate(fields)}
        struct = exp.Struct(expressions=[exp.alias_(f.this, f"p{n}") for n, f in enumerate(fields)])
        row = exp.select(
            *keys, exp.alias_(exp.Literal.number(i), SOURCE), exp.alias_(struct, PAYLOAD)
        )
        row = row.from_(branch.args["from_"].this)
        rebuilt = row if rebuilt is None else exp.union(rebuilt, row, distinct=False)
    assert rebuilt is not None
    grouped.args["from_"].this.set("this", rebuilt)
    index = {name: n for n, name in enumerate(positions)}
    for first in list(grouped.find_all(exp.Alias)):
        if first.alias in index:
            chosen = exp.If(
                this=exp.EQ(
                    this=exp.column(SOURCE), expression=exp.Literal.number(index[first.alias])
                ),
                true=exp.column(PAYLOAD),
                false=exp.Null(),
            )
            first.set("this", exp.func("FIRST", chosen, exp.true()))
    for dot in list(q.find_all(exp.Dot)):
        struct = dot.this
        if isinstance(struct, exp.Column) and struct.name in positions:
            dot.set("expression", exp.to_identifier(positions[struct.name][dot.name]))
    return q


def shuffled(model: Any, query: exp.Select) -> exp.Select:
    """The compiled bootstrap ``query`` (per-source folds LEFT JOINed to their keys: partial
    update with a sequence field, deduplicate, first_row) with its folds put together by one
    shuffle, as the compiler does for aggregation and sequence groups (``one_shuffle``). For
    deduplicate and first_row, the winning version ``__lw_keys.__lw_v`` (the MAX or MIN over
    the folds' versions) becomes the GREATEST (LEAST) of the sources' versions."""
    q = one_shuffle.one_shuffle(model, query.copy(), KEYS)
    if not any(c.table == KEYS and c.name == ROW_VERSION for c in q.find_all(exp.Column)):
        return q
    grouped = q.args["from_"].this.this
    place = "LEAST" if model.engine.keeps_first else "GREATEST"
    sources = [f"__lw_s{b.index}" for b in model.branches]
    picked = exp.func(place, *(exp.column(ROW_VERSION, table=s) for s in sources))
    winners = exp.select("*", exp.alias_(picked, ROW_VERSION)).from_(grouped.subquery("g"))
    q.set("from_", exp.From(this=winners.subquery(KEYS)))
    return q


def union_only(query: exp.Select) -> exp.Select:
    """The folds (the query's CTEs), unioned and grouped, nothing assembled."""
    q = query.copy()
    grouped = grouped_of(q)
    out = exp.select("*").from_(grouped.subquery("g"))
    out.set("with_", q.args["with_"])
    return out


def typed_form(spark: Any, node: Any, query: exp.Select) -> exp.Select:
    """The bootstrap compiled again with its folds' column types, as a run sends it."""
    model = analyze(node)
    probe = one_shuffle.with_fold_structs(model, query, KEYS)
    assert probe is not None
    fields = {
        f.name: {g.name: g.dataType.json() for g in f.dataType.fields}
        for f in spark.sql(bound(probe)).schema.fields
        if f.name.startswith("__lw_s")
    }
    types = one_shuffle.fold_types_of(model, fields)
    typed = compile_model(node, PlanContext(fold_types=types)).bootstrap.expression
    assert "__lw_src" in typed.sql()
    return typed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", default="16,32,64")
    parser.add_argument("--engines", default="agg,pu_groups")
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--name", default="")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/width"))
    args = parser.parse_args()
    engines = args.engines.split(",")
    result: dict[str, Any] = {"keys": args.keys, "load_start": os.getloadavg(), "shapes": []}
    suffix = f"_{args.name}" if args.name else ""
    stem = Path(__file__).resolve().parent / "results" / f"width_placeholders{suffix}"
    for sources in [int(s) for s in args.sources.split(",")]:
        shape = Shape(sources)
        record, project = start_shape(shape, engines, args.out, result, "placeholders")
        spark = open_spark(project)
        clock, manifest = run.Clock(spark), manifest_of(project)
        write_round(spark, shape, args.keys, "bootstrap")
        for engine in engines:
            node = manifest.models[f"wide_{engine}"]
            query = compile_model(node).bootstrap.expression
            if query.args.get("joins"):  # its folds joined: beside it, put together by one shuffle
                others, texts = ["shuffled"], {"shuffled": bound(shuffled(analyze(node), query))}
            else:
                payload, typed = payload_form(query), typed_form(spark, node, query)
                others, texts = (
                    ["payload", "typed"],
                    {
                        "payload": bound(payload),
                        "typed": bound(typed),
                        "union": bound(union_only(query)),
                        "union_payload": bound(union_only(payload)),
                        "union_typed": bound(union_only(typed)),
                    },
                )
            texts = {"compiled": bound(query), **texts}
            figures: dict[str, Any] = {}
            for _ in range(args.repeat):
                for name, text in texts.items():

                    def plan(sql: str = text, session: Any = spark) -> None:
                        session.sql("EXPLAIN " + sql).collect()

                    took = clock.measure(plan)
                    best = figures.get(name)
                    if best is None or took["cpu"] < best["cpu"]:
                        figures[name] = {k: round(v, 3) for k, v in took.items()}
            a = spark.sql(texts["compiled"])
            record["equal"][engine] = all(
                a.exceptAll(b).isEmpty() and b.exceptAll(a).isEmpty()
                for b in (spark.sql(texts[other]) for other in others)
            )
            record["placeholders"][engine] = figures
            print(shape.name, engine, json.dumps(figures), record["equal"][engine], flush=True)
            stem.with_suffix(".json").write_text(json.dumps(result, indent=1))
        spark.stop()
    result["load_end"] = os.getloadavg()
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

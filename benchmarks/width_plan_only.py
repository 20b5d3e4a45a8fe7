"""The width benchmark's ``--plan-only`` mode: Spark's planning of every statement lakewide
sends, at any width, cheaply.

Per shape, the project's sources get a few keys (``--keys``, e.g. 200) and each engine runs
its bootstrap, 1% of keys in one source, 1% in every source and a run with nothing new, as
``width.py`` does, but on tiny data: what costs is the planning. Every statement the run
sends through the adapter is first planned apart with ``EXPLAIN`` (a query as it is; a
``CREATE ... AS`` query: its query; a ``MERGE`` / ``INSERT``: the whole statement, as Iceberg
rewrites it), the least JVM CPU of ``--repeat`` plans recorded under a label naming its kind
and what it reads or writes (``N`` for a source's number: one source's statement sums over
the sources). A ``MERGE`` is planned as a run plans it (``lakewide.spark.merge_planning``)
and once more with every optimizer rule (``..., every rule``: as before that). The FULL OUTER
JOIN rebuild of the same width is planned the same way, and lakewide's table is compared with
the JOIN's rows after the last step. After the every-source step, the plainest MERGE that
writes every column of the table (``MERGE floor``: each column set from a batch of every
column) is planned too, as the floor any MERGE of every source's columns meets at that width.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import run
import width_models
import width_setup
from sqlglot import exp
from width_models import Shape

from lakewide.spark.adapter import SparkAdapter
from lakewide.spark.merge_planning import EXCLUDED, MERGE_EXCLUDED_RULES, rules_excluded
from lakewide.vocabulary.dialect import to_sql

STEPS = ("bootstrap", "one", "all", "noop")


def planned(statement: exp.Expr) -> exp.Expr | None:
    """The part of a statement that Spark plans as a query (None: a command that plans no
    query: DDL, ``SET``, ``CALL``)."""
    if isinstance(statement, exp.Create) and isinstance(statement.expression, exp.Query):
        return statement.expression
    if isinstance(statement, (exp.Query, exp.Merge, exp.Insert, exp.Delete, exp.Update)):
        return statement
    return None


def label(statement: exp.Expr) -> str:
    """What a statement is: its kind and the relation it writes (a ``CREATE``, ``MERGE``,
    ``INSERT``) or the relations it reads (a query), a source's number as ``N``."""
    kind = statement.key.upper()
    if isinstance(statement, exp.Create):
        kind = f"CREATE {statement.args.get('kind') or ''}".strip()
    target = statement.this if isinstance(statement, (exp.Create, exp.Merge, exp.Insert)) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(target, exp.Table):
        names = [target.name]
    else:
        names = sorted({t.name for t in statement.find_all(exp.Table)})
        names = names[:2] + (["..."] if len(names) > 2 else [])
    return re.sub(r"\d+", "N", f"{kind} {', '.join(names)}")


class Recorder:
    """Plans every statement the adapter sends before it runs; keeps the CPU by label."""

    def __init__(self, clock: run.Clock, repeat: int) -> None:
        self.clock, self.repeat = clock, repeat
        self.where: dict[str, Any] | None = None  # label -> figures of the current run

    def explain(self, spark: Any, sql: str) -> dict[str, Any]:
        """The least JVM CPU (and wall) of ``repeat`` EXPLAINs of ``sql``."""
        best: dict[str, Any] = {}
        for _ in range(self.repeat):
            said: list[Any] = []

            def plan(said: list[Any] = said) -> None:
                said.extend(spark.sql("EXPLAIN " + sql).collect())

            got = self.clock.measure(plan)
            text = said[0][0] if said else ""
            if "Error occurred during query planning" in text:
                return {**got, "error": text[:500]}
            if not best or got["cpu"] < best["cpu"]:
                best = got
        return best

    def with_every_rule(self, spark: Any, name: str, text: str) -> None:
        """The MERGE planned also with the rules a run's MERGE excludes (the figure before
        ``lakewide.spark.merge_planning``), for the same statement in the same state."""
        assert self.where is not None
        before = spark.conf.get(EXCLUDED, None)
        spark.conf.unset(EXCLUDED)
        try:
            figures = self.explain(spark, text)
        finally:
            if before is not None:
                spark.conf.set(EXCLUDED, before)
        entry = self.where.setdefault(f"{name}, every rule", {"cpu": 0.0, "s": 0.0, "n": 0})
        entry["cpu"] = round(entry["cpu"] + figures["cpu"], 3)
        entry["s"] = round(entry["s"] + figures["s"], 3)
        entry["n"] += 1

    def wrap(self, sql: Callable[[Any, exp.Expression], Any]) -> Callable[..., Any]:
        def recorded(adapter: Any, statement: exp.Expression) -> Any:
            query = planned(statement)
            if self.where is not None and query is not None:
                text = to_sql(query, pretty=False)
                figures = self.explain(adapter.spark, text)
                entry = self.where.setdefault(label(statement), {"cpu": 0.0, "s": 0.0, "n": 0})
                entry["cpu"] = round(entry["cpu"] + figures["cpu"], 3)
                entry["s"] = round(entry["s"] + figures["s"], 3)
                entry["n"] += 1
                if "error" in figures:
                    entry["error"] = figures["error"]
                if isinstance(statement, exp.Merge):  # as before: with every optimizer rule
                    self.with_every_rule(adapter.spark, label(statement), text)
            return sql(adapter, statement)

        return recorded


def floor_merge(spark: Any, recorder: Recorder, engine: str) -> dict[str, Any]:
    """The planning of the plainest MERGE that writes every column of lakewide's table (its
    own columns included) from a batch holding every column: ``UPDATE SET`` each column from
    the batch, ``INSERT`` the rest, the batch the table itself, planned as a run plans a MERGE
    (``lakewide.spark.merge_planning``). What any MERGE of every source's columns costs Spark
    at this width, whatever it computes: lakewide's MERGE of every source is judged by it."""
    table = f"lw.wide.wide_{engine}"
    columns = [f"`{c}`" for c in spark.table(table).columns]
    sets = ", ".join(f"t.{c} = s.{c}" for c in columns if c != "`k`")
    values = ", ".join(f"s.{c}" for c in columns)
    text = (
        f"MERGE INTO {table} t USING {table} s ON t.k = s.k WHEN MATCHED THEN UPDATE SET {sets} "
        f"WHEN NOT MATCHED THEN INSERT ({', '.join(columns)}) VALUES ({values})"
    )
    with rules_excluded(spark, MERGE_EXCLUDED_RULES):
        figures = recorder.explain(spark, text)
    return {"cpu": round(figures["cpu"], 3), "s": round(figures["s"], 3), "n": 1}


def plan_shape(
    shape: Shape,
    engines: list[str],
    keys: int,
    out: Path,
    repeat: int,
    result: dict[str, Any],
    save: Callable[[], None],
    steps: tuple[str, ...] = STEPS,
) -> None:
    """Every statement of every step of ``shape`` (``steps``: the first of them, a wide shape
    measured in less time) planned apart; the JOIN's planning; the rows compared with the
    JOIN's after the last step."""
    record, project = width_setup.start_shape(shape, engines, out, result, "plans")
    spark = width_setup.open_spark(project)
    recorder = Recorder(run.Clock(spark), repeat)
    original = SparkAdapter.sql
    SparkAdapter.sql = recorder.wrap(original)  # type: ignore[method-assign]
    try:
        manifest = width_setup.manifest_of(project)
        adapter = SparkAdapter(manifest.output, spark=spark)
        for step in steps:
            width_setup.write_round(spark, shape, keys, step)
            for engine in engines:
                plans = record["plans"].setdefault(engine, {})
                if step == "bootstrap":
                    join = width_models.join_select(engine, shape)
                    plans["join"] = {"JOIN rebuild": recorder.explain(spark, join)}
                recorder.where = plans.setdefault(step, {})
                again = width_setup.manifest_of(project) if step == "noop" else manifest
                run._run(again, f"wide_{engine}", adapter)
                if step == "all":  # Spark's floor for a MERGE that writes every column
                    plans[step]["MERGE floor"] = floor_merge(spark, recorder, engine)
                recorder.where = None
            save()
        for engine in engines:
            spark.sql(
                f"CREATE OR REPLACE TABLE lw.wide.join_{engine} USING iceberg AS "
                + width_models.join_select(engine, shape)
            )
            record["equal"][engine] = run.same_rows(
                spark, f"lw.wide.wide_{engine}", f"lw.wide.join_{engine}"
            )
        save()
    finally:
        SparkAdapter.sql = original  # type: ignore[method-assign]
        spark.stop()


def markdown(result: dict[str, Any]) -> str:
    """Per engine: each statement's planning (JVM CPU s, summed over its sends in a step) by
    shape, its ratio to the JOIN rebuild's, and its growth exponent over the value columns."""
    from width_report import slope

    shapes = result["shapes"]
    lines = [
        f"# Spark planning at width: {result['keys']} keys (plan only)",
        "",
        "JVM CPU seconds of `EXPLAIN` of each statement a run sends (the least of "
        f"{result.get('repeat', 1)}; summed over its sends in the step), `(x J)`: to the JOIN "
        "rebuild's planning at the same width; `slope`: log-log over the value columns of the "
        "S x 16 shapes.",
    ]
    for engine in result["engines"]:
        header = " | ".join(f"{r['shape']} ({r['columns']} cols)" for r in shapes)
        lines += ["", f"## {engine}", "", f"| step: statement | {header} | slope |"]
        lines.append("|---|" + "---|" * (len(shapes) + 1))
        rows: dict[tuple[str, str], None] = {("join", "JOIN rebuild"): None}
        for record in shapes:
            for step in STEPS:
                for name in record["plans"].get(engine, {}).get(step, {}):
                    rows[(step, name)] = None
        worst = [0.0] * len(shapes)
        for step, name in rows:
            cells, points = [], []
            for i, record in enumerate(shapes):
                plans = record["plans"].get(engine, {})
                got = plans.get(step, {}).get(name)
                join = plans.get("join", {}).get("JOIN rebuild", {}).get("cpu")
                if got is None:
                    cells.append("–")
                    continue
                ratio = got["cpu"] / join if join else float("nan")
                if step != "join" and not name.endswith(", every rule"):  # a run's own
                    worst[i] = max(worst[i], ratio)
                mark = " **!**" if "error" in got else ""
                cells.append(f"{got['cpu']:.2f} ({ratio:.1f}x){mark}")
                if record["shape"].endswith("x16"):
                    points.append((record["columns"], got["cpu"]))
            growth = slope(points)
            lines.append(
                f"| {step}: {name} | {' | '.join(cells)} | "
                f"{'–' if growth is None else f'{growth:.2f}'} |"
            )
        most = " | ".join(f"{w:.1f}x" for w in worst)
        lines.append(f"| most x the JOIN (a run's statements) | {most} | |")
        equal = [{True: "yes", False: "**no**"}.get(r["equal"].get(engine), "–") for r in shapes]
        lines.append(f"| rows equal to the JOIN's | {' | '.join(equal)} | |")
    return "\n".join(lines) + "\n"

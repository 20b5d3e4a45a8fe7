"""The fixed cost of small commands, before and after its cuts, side by side on one session.

Per round, two copies of each project (the repository's example, and a three-source
``partial_update`` model over tables of 5 rows: tests/integration/test_run_fixed_cost.py's)
run the same commands in-process through the CLI, on one SparkSession: ``lakewide build``;
one new row in one source then ``lakewide run``; ``run`` again (nothing new); ``lakewide
test``. One copy runs with the earlier code of each cut patched back in (``before``), the
other with today's (``after``), in an order alternating per round. Per command: wall and JVM
CPU seconds (the JVM settled after each), Spark jobs (the DAG scheduler's job ids) and
``spark.sql`` statements. After each command pair the
copies' model tables must hold the same rows. Medians over all rounds but the first (JIT
warm-up).

    PYTHONPATH=$PWD python benchmarks/command_overhead.py --rounds 4
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import SparkSession  # noqa: E402

from benchmarks.run import Clock  # noqa: E402
from lakewide.commands.services.spark_start import shared_session  # noqa: E402
from lakewide.run.testing import data_test_runner, tests_after_models  # noqa: E402
from lakewide.run.testing.data_test_runner import Counted  # noqa: E402
from lakewide.spark.adapter import SparkAdapter  # noqa: E402
from lakewide.spark.runtime import create_session, spark_conf  # noqa: E402
from lakewide.spark.session import Session  # noqa: E402
from tests.integration.conftest import (  # noqa: E402
    MODELS,
    REPO,
    ProjectRun,
    copy_project,
    hadoop_project,
)
from tests.integration.test_run_fixed_cost import SCHEMAS, THREE  # noqa: E402

VARIANTS = ("before", "after")
COMMANDS = ("build", "run", "no-op run", "test")
RESULTS = Path(__file__).resolve().parent / "results"


def _stage_before(self: SparkAdapter, view: str, query: Any) -> int:
    """``stage`` as it was: an eager local checkpoint, then a count (three jobs)."""
    frame = self.sql(query).localCheckpoint(eager=True)
    frame.createOrReplaceTempView(view)
    return int(frame.count())


def _namespace_before(self: Session, relation: Any) -> None:
    """``ensure_namespace`` as it was: one statement per call."""
    self._namespaces.clear()
    ensure(self, relation)


def _count_apart(adapter: SparkAdapter, tests: list[Any]) -> Counted:
    """``count_together`` as it was not: every data test counted by a query of its own."""
    return Counted({})


ensure = Session.ensure_namespace
PATCHES: dict[tuple[Any, str], Callable[..., Any]] = {
    (SparkAdapter, "stage"): _stage_before,
    (Session, "ensure_namespace"): _namespace_before,
    (data_test_runner, "count_together"): _count_apart,
    (tests_after_models, "count_together"): _count_apart,
}


@contextlib.contextmanager
def earlier_code() -> Iterator[None]:
    """The ``before`` variant: each cut's earlier code patched back in meanwhile."""
    saved = {key: vars(key[0])[key[1]] for key in PATCHES}
    for (owner, name), code in PATCHES.items():
        setattr(owner, name, code)
    try:
        yield
    finally:
        for (owner, name), code in saved.items():
            setattr(owner, name, code)


class Statements:
    """``spark.sql`` calls counted while installed."""

    def __init__(self) -> None:
        self.count = 0
        self._sql = SparkSession.sql

    def install(self) -> None:
        def counted(spark: Any, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return self._sql(spark, *args, **kwargs)

        SparkSession.sql = counted  # type: ignore[method-assign]


def jobs_submitted(spark: Any) -> int:
    """Spark jobs submitted so far (the DAG scheduler's next job id)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def cli(spark: Any, project: Path, *args: str) -> None:
    """``lakewide --project-dir project ARGS`` in-process on ``spark``; it must succeed."""
    from lakewide.cli import main

    saved, sys.argv = sys.argv, ["lakewide", "--project-dir", str(project), *args]
    out = io.StringIO()
    try:
        with shared_session(spark), contextlib.redirect_stdout(out):
            main()
    except SystemExit as done:
        assert done.code in (0, None), out.getvalue()[-2000:]
    finally:
        sys.argv = saved


def three_project(folder: Path, warehouse: Path, spark: Any, n: str) -> ProjectRun:
    """Model ``m`` (THREE) over sources ``a``, ``b``, ``c`` of 5 rows each."""
    root, source = folder / f"three_{n}", f"src_{n}"
    hadoop_project(root, warehouse, f"three_{n}")
    tables = "".join(f"      - name: {t}\n" for t in SCHEMAS)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {source}\n    tables:\n{tables}"
    )
    (root / "models" / "m.sql").write_text(THREE)
    for i, table in enumerate(SCHEMAS):
        rows = [(k, 10 * k + i, 1) for k in range(1, 6)]
        frame = spark.createDataFrame(rows, SCHEMAS[table]).coalesce(1)
        frame.writeTo(f"lw.{source}.{table}").using("iceberg").create()
    return ProjectRun(root, spark, f"three_{n}", source)


def one_new_row(project: ProjectRun, example: bool) -> None:
    """One new upstream row in one source (a known user and item: the data tests stay green)."""
    if example:
        project.sql("INSERT INTO {ods}.clicks VALUES ('user_101', 'prod_501', 1)")
    else:
        project.sql("INSERT INTO {ods}.a VALUES (9, 9, 2)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--name", default="command_overhead")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lakewide-commands-"))
    warehouse = folder / "warehouse"
    conf = spark_conf("local[2]", "lw", {"type": "hadoop", "warehouse": str(warehouse)}, {})
    spark = create_session("lakewide-commands", "local[2]", conf)
    clock, statements = Clock(spark), Statements()
    statements.install()
    rows: list[dict[str, Any]] = []
    for i in range(args.rounds):
        for kind in ("example", "three"):
            projects: dict[str, ProjectRun] = {}
            for variant in VARIANTS:
                n = f"{kind}_{variant}_{i}"
                if kind == "example":
                    (folder / n).mkdir()
                    projects[variant] = copy_project(folder / n, spark, warehouse, REPO)
                else:
                    projects[variant] = three_project(folder, warehouse, spark, n)
            models = MODELS if kind == "example" else ("m",)
            for command in COMMANDS:
                for variant in VARIANTS if i % 2 == 0 else VARIANTS[::-1]:
                    project = projects[variant]
                    if command == "run":
                        one_new_row(project, kind == "example")
                    words = command.split()[-1:]
                    jobs, sql = jobs_submitted(spark), statements.count
                    patched = earlier_code() if variant == "before" else contextlib.nullcontext()
                    with patched:
                        started = time.process_time()
                        timed = clock.measure(lambda p=project, w=words: cli(spark, p.root, *w))
                    row = {
                        "round": i,
                        "project": kind,
                        "command": command,
                        "variant": variant,
                        "wall": timed["s"],
                        "cpu": timed["cpu"],
                        "python": time.process_time() - started,
                        "jobs": jobs_submitted(spark) - jobs,
                        "statements": statements.count - sql,
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if command != "test":
                    one, two = (projects[v] for v in VARIANTS)
                    for model in models:
                        assert one.rows(model) == two.rows(model), (kind, command, model)
    spark.stop()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(rows, indent=1))
    table = report(rows)
    (RESULTS / f"{args.name}.md").write_text(table)
    print(table)


def report(rows: list[dict[str, Any]]) -> str:
    """Medians per project, command and variant over the rounds after the first."""
    warm = [r for r in rows if r["round"] > 0] or rows
    lines = [
        "| project | command | variant | jobs | statements | JVM CPU s | wall s |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in ("example", "three"):
        for command in COMMANDS:
            for variant in VARIANTS:
                got = [
                    r
                    for r in warm
                    if (r["project"], r["command"], r["variant"]) == (kind, command, variant)
                ]
                cells = [
                    statistics.median(r[k] for r in got)
                    for k in ("jobs", "statements", "cpu", "wall")
                ]
                lines.append(
                    f"| {kind} | {command} | {variant} | {cells[0]:.0f} | {cells[1]:.0f} | "
                    f"{cells[2]:.2f} | {cells[3]:.2f} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

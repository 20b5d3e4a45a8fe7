"""Integration fixtures: copies of the example project wired to the session's Spark + warehouse."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lakewide.commands.services.spark_start import shared_session
from lakewide.project.graph import select
from lakewide.project.manifest import Manifest, load_manifest
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import load_project
from lakewide.run.models.executor import run_models
from lakewide.run.models.outcomes import ModelResult
from lakewide.run.models.seed_load import load_seeds
from lakewide.spark.adapter import SparkAdapter
from lakewide.vocabulary import events
from tests.support.inline_rows import write_rows
from tests.support.project_factory import run_main, run_main_streams

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_PARTS = ("pyproject.toml", "models", "macros", "seeds", "data-tests")
_counter = itertools.count(1)

#: the example's models and seeds
MODELS = (
    "order_detail",
    "order_groups",
    "order_status_counts",
    "user_activity",
    "user_rec_wide",
)
SEEDS = ("clicks", "impressions", "order_address", "order_info", "recommendations", "user_events")
# Appends after the first build: an update of order 1002, a new order, a click count for a known
# key and a new key, a new event: every model has new upstream rows.
APPENDS = (
    "INSERT INTO {ods}.order_info VALUES (1002, 'laptop', 'web', 502, "
    "TIMESTAMP '2024-05-01 10:05:00', 3, TIMESTAMP '2024-05-02 09:00:00')",
    "INSERT INTO {ods}.order_address VALUES (1003, 'Nanjing', 'Wuhan', "
    "TIMESTAMP '2024-05-02 09:00:01')",
    "INSERT INTO {ods}.clicks VALUES ('user_101', 'prod_501', 5), ('user_105', 'prod_505', 1)",
    "INSERT INTO {ods}.user_events VALUES "
    "('user_101', TIMESTAMP '2024-05-02 09:00:00', 7.5, 'home', true)",
)


def null_first(row: tuple) -> tuple:
    """Sort key for rows holding NULLs: None sorts before any value."""
    return tuple((v is not None, v) for v in row)


@dataclass
class ProjectRun:
    """One project on disk, bound to the test session's Spark and warehouse."""

    root: Path
    spark: Any
    namespace: str
    seed_schema: str

    def manifest(self) -> Manifest:
        project = load_project(self.root)
        output = load_output(find_profiles_file(project.root), project.profile, None, project.root)
        return load_manifest(project, output)

    def adapter(self, manifest: Manifest) -> SparkAdapter:
        return SparkAdapter(manifest.output, spark=self.spark)

    def seed(self) -> None:
        manifest = self.manifest()
        load_seeds(manifest, self.adapter(manifest))

    def run(
        self, *selectors: str, full_refresh: bool = False, threads: int = 1
    ) -> dict[str, ModelResult]:
        """Run the selected models (all by default) as ``lakewide run`` does; ``threads`` > 1
        runs models with no ref path between them concurrently (``--threads``), each on its
        own session: read their tables after ``refresh`` (this session caches them)."""
        manifest = self.manifest()
        names = select(manifest.models, list(selectors) or None, None, manifest.project.root)
        results = run_models(
            manifest, names, self.adapter(manifest), full_refresh=full_refresh, threads=threads
        )
        failed = [r for r in results if r.status != "success"]
        assert not failed, [r.message for r in failed]
        return {r.name: r for r in results}

    def refresh(self, *tables: str) -> None:
        """Drop this session's cached copies of the namespace's ``tables`` (written by other
        sessions, e.g. a run with ``threads``)."""
        for table in tables:
            self.spark.catalog.refreshTable(f"lw.{self.namespace}.{table}")

    def rows(self, table: str, schema: str | None = None) -> list[tuple]:
        """The table's rows in its own columns (lakewide's hidden ``__lw_`` columns left out,
        as a reader selecting the model's columns sees them), sorted."""
        frame = self.spark.table(f"lw.{schema or self.namespace}.{table}")
        frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
        return sorted((tuple(r) for r in frame.collect()), key=null_first)

    def sql(self, text: str) -> None:
        self.spark.sql(
            text.replace("{ods}", f"lw.{self.seed_schema}").replace("{ns}", f"lw.{self.namespace}")
        )


@pytest.fixture
def example(tmp_path: Path, spark: Any, warehouse: Path) -> ProjectRun:
    """A fresh copy of the repository's example project in its own namespaces."""
    return copy_project(tmp_path, spark, warehouse, REPO)


def copy_project(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    source: Path,
    edit: Callable[[Path], None] | None = None,
) -> ProjectRun:
    """Copy a project, point its profile at the session warehouse with unique namespaces."""
    n = next(_counter)
    namespace, seed_schema = f"it{n}_analytics", f"it{n}_ods"
    root = tmp_path / "project"
    root.mkdir()
    for part in EXAMPLE_PARTS:
        path = source / part
        if path.is_dir():
            shutil.copytree(path, root / part)
        elif path.exists():
            shutil.copy(path, root / part)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('seed-schema = "ods"', f'seed-schema = "{seed_schema}"')
    )
    sources = root / "models" / "sources.yml"
    if sources.exists():
        sources.write_text(sources.read_text().replace("schema: ods", f"schema: {seed_schema}"))
    (root / "profiles.yml").write_text(
        "lakewide_example:\n  target: test\n  outputs:\n    test:\n      catalog: lw\n"
        f"      catalog_type: hadoop\n      warehouse: {warehouse}\n      namespace: {namespace}\n"
    )
    if edit:
        edit(root)
    return ProjectRun(root, spark, namespace, seed_schema)


@dataclass
class ModelRun:
    """A one-model project over source tables the test writes batch by batch."""

    run: ProjectRun
    schemas: dict[str, str]  # source table -> Spark DDL schema
    last: Any = None  # ModelResult of the last step

    def write(self, table: str, rows: list[tuple]) -> None:
        """Append ``rows`` to a source table (one data file, in this order)."""
        name = f"lw.{self.run.seed_schema}.{table}"
        frame = self.run.spark.createDataFrame(rows, self.schemas[table]).coalesce(1)
        if self.run.spark.catalog.tableExists(name):
            if rows:
                frame.writeTo(name).append()
        else:
            frame.writeTo(name).using("iceberg").create()

    def step(self, batches: dict[str, list[tuple]], **kwargs: Any) -> list[tuple]:
        """Write each source's batch, run the model, return the table's rows."""
        for table, rows in batches.items():
            self.write(table, rows)
        self.last = self.run.run(**kwargs)["m"]
        return self.run.rows("m")


@pytest.fixture(scope="session")
def built(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, warehouse: Path
) -> tuple[ProjectRun, dict[str, ModelResult]]:
    """A copy of the example, seeded and built once per session: the project and the build's
    results, for tests that read it as its first build leaves it (or run it again without new
    data)."""
    project = copy_project(tmp_path_factory.mktemp("example"), spark, warehouse, REPO)
    project.seed()
    return project, project.run()


@pytest.fixture(scope="session")
def hadoop_reference(
    tmp_path_factory: pytest.TempPathFactory, spark: Any, warehouse: Path
) -> dict[str, dict[str, list[tuple]]]:
    """The example's model rows on the hadoop catalog: after the build and after APPENDS (the
    oracle of the example on other catalogs, built once per session)."""
    run = copy_project(tmp_path_factory.mktemp("hadoop"), spark, warehouse, REPO)
    run.seed()
    run.run()
    rows = {"build": {m: run.rows(m) for m in MODELS}}
    for statement in APPENDS:
        run.sql(statement)
    run.run()
    rows["appended"] = {m: run.rows(m) for m in MODELS}
    return rows


def hadoop_project(root: Path, warehouse: Path, namespace: str) -> None:
    """An empty project at ``root`` (``models/``, profile ``t``) writing ``namespace`` of the
    hadoop catalog ``lw`` in ``warehouse``."""
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "t"\n\n[tool.lakewide]\nprofile = "t"\n'
    )
    (root / "profiles.yml").write_text(
        "t:\n  target: test\n  outputs:\n    test:\n      catalog: lw\n"
        f"      catalog_type: hadoop\n      warehouse: {warehouse}\n"
        f"      namespace: {namespace}\n"
    )


class InlineModelRun(ModelRun):
    """A ModelRun whose writes are one SQL statement of inline VALUES each
    (tests.support.inline_rows): no Python worker decodes the rows."""

    def write(self, table: str, rows: list[tuple]) -> None:
        """Append ``rows`` to a source table (one data file, in this order)."""
        name = f"lw.{self.run.seed_schema}.{table}"
        exists = self.run.spark.catalog.tableExists(name)
        write_rows(self.run.spark, name, self.schemas[table], rows, create=not exists)


def model_project(
    tmp_path: Path, spark: Any, warehouse: Path, sql: str, schemas: dict[str, str]
) -> ProjectRun:
    """A project under ``tmp_path`` with model ``m`` (``sql``) over the tables of ``schemas``
    in source ``src``, in namespaces of its own."""
    n = next(_counter)
    namespace, seed_schema = f"m{n}_analytics", f"m{n}_src"
    root = tmp_path / f"model{n}"
    hadoop_project(root, warehouse, namespace)
    tables = "".join(f"      - name: {t}\n" for t in schemas)
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {seed_schema}\n    tables:\n{tables}"
    )
    (root / "models" / "m.sql").write_text(sql)
    return ProjectRun(root, spark, namespace, seed_schema)


@pytest.fixture
def model_run(tmp_path: Path, spark: Any, warehouse: Path) -> Callable[..., ModelRun]:
    """Factory: ``model_run(sql, schemas)`` builds a project with model ``m`` over ``src``."""

    def build(sql: str, schemas: dict[str, str]) -> ModelRun:
        return ModelRun(model_project(tmp_path, spark, warehouse, sql, schemas), schemas)

    return build


@pytest.fixture
def inline_model_run(tmp_path: Path, spark: Any, warehouse: Path) -> Callable[..., ModelRun]:
    """``model_run`` whose source writes are inline VALUES statements (InlineModelRun)."""

    def build(sql: str, schemas: dict[str, str]) -> ModelRun:
        return InlineModelRun(model_project(tmp_path, spark, warehouse, sql, schemas), schemas)

    return build


@pytest.fixture
def cli(
    spark: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    """``cli(project, *args)``: ``lakewide --project-dir project ARGS`` in-process on the test
    session: (exit code, stdout + stderr)."""

    def invoke(project: Path, *args: str) -> tuple[int, str]:
        with shared_session(spark):
            return run_main(monkeypatch, capsys, "--project-dir", str(project), *args)

    return invoke


@pytest.fixture
def cli_streams(
    spark: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    """``cli_streams(project, *args)``: as ``cli``, with stdout and stderr apart: (exit code,
    stdout, stderr)."""

    def invoke(project: Path, *args: str) -> tuple[int, str, str]:
        with shared_session(spark):
            return run_main_streams(monkeypatch, capsys, "--project-dir", str(project), *args)

    return invoke


@pytest.fixture
def cli_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    """``cli_on(session, project, *args)``: as ``cli``, on ``session`` (a ``newSession()`` of
    the test session with settings of its own, as a profile's ``spark_conf`` gives a process)."""

    def invoke(session: Any, project: Path, *args: str) -> tuple[int, str]:
        with shared_session(session):
            return run_main(monkeypatch, capsys, "--project-dir", str(project), *args)

    return invoke


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements lakewide runs meanwhile."""
    seen: list[str] = []

    def listen(event: events.Event) -> None:
        if event.name == "SQLQuery":
            seen.append(event.msg)

    with events.listening(listen):
        yield seen

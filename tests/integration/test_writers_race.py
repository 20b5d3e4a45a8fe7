"""Two ``lakewide run`` processes (two machines) on one JDBC catalog on PostgreSQL, raced many
times with random kill points: no batch applied twice, none lost, offsets never corrupt.

Each round appends a batch to the sources, starts two writers together on the same models,
maybe SIGKILLs one (its whole process group, JVM included: a machine dying) after a random
delay or at a random crash point, waits for both, then checks every model against a
plain-Python oracle at the offsets its last commit recorded: whatever a model committed must
be exactly the sources at those snapshots (a batch applied twice shows as a wrong sum, a lost
or skipped one as a missing row). A last clean run must then have consumed everything.

A soak (marked ``soak``: ``python -m pytest -m soak``, or this file named): 3 rounds; the long
soak, 12: ``LW_SOAK=long python -m pytest tests/integration/test_writers_race.py``
(``LAKEWIDE_RACE_ROUNDS=<n>`` for any other count).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lakewide.state.offsets import CHANGELOG_OF, Snapshot, TableMeta, last_offsets
from tests.integration.spark_worker import SparkWorker
from tests.oracle.partial_update import bootstrap
from tests.support.cli_process import quick_jvm
from tests.support.postgres_server import PostgresServer, missing_prerequisite
from tests.support.project_factory import make_project
from tests.support.suite_profile import soak

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.soak]

# 3 rounds by default (a round of each kind in KINDS: none, crash, delay), 12 in the
# long profile (LW_SOAK=long, tests.support.suite_profile); LAKEWIDE_RACE_ROUNDS sets them
# directly
ROUNDS = int(os.environ.get("LAKEWIDE_RACE_ROUNDS", soak(3, 12)))
DRIVER = Path("/usr/share/java/postgresql.jar")
CRASH_POINTS = ("before-stage", "before-commit", "after-commit", "before-changelog")
KINDS = ("none", "crash", "delay", "crash")  # how a round ends: a writer killed, or not

SOURCES = {
    "a": "k INT, clicks BIGINT",
    "b": "k INT, buys BIGINT",
    "dim": "k INT, g STRING, ts BIGINT",
    "fact": "k INT, amount BIGINT, ts BIGINT",
}
MODELS = {
    # a batch applied twice doubles its clicks, buys and events
    "models/m.sql": """
        {{ config(merge_engine='aggregation', primary_key='k',
                  aggregates={'clicks': 'sum', 'buys': 'sum', 'events': 'sum'}) }}
        SELECT k, clicks, CAST(NULL AS BIGINT) AS buys, CAST(1 AS BIGINT) AS events
        FROM {{ source('src', 'a') }}
        UNION ALL
        SELECT k, CAST(NULL AS BIGINT), buys, CAST(1 AS BIGINT) FROM {{ source('src', 'b') }}
        """,
    # sequence field: late records (older ts) must not overwrite newer values
    "models/wide.sql": """
        {{ config(merge_engine='partial_update', primary_key='k', sequence_field='ts',
                  write_mode='merge-on-read') }}
        SELECT k, g, CAST(NULL AS BIGINT) AS amount, ts FROM {{ source('src', 'dim') }}
        UNION ALL
        SELECT k, CAST(NULL AS STRING), amount, ts FROM {{ source('src', 'fact') }}
        """,
    # reads wide's own changelog: changes written twice would count twice
    "models/by_group.sql": """
        {{ config(merge_engine='aggregation', primary_key='g',
                  aggregates={'total': 'sum', 'n': 'sum'}) }}
        SELECT g, amount AS total, CAST(1 AS BIGINT) AS n FROM {{ ref('wide') }}
        WHERE g IS NOT NULL
        """,
    "models/summary.sql": """
        {{ config(materialized='table') }}
        SELECT count(*) AS keys, sum(clicks) AS clicks, sum(events) AS events FROM {{ ref('m') }}
        """,
    "models/busy.sql": """
        {{ config(materialized='view') }}
        SELECT k, events FROM {{ ref('m') }} WHERE events > 1
        """,
}


@dataclass
class Sources:
    """Every row appended so far, to compute the oracle at any snapshot."""

    worker: SparkWorker
    catalog: str
    rng: random.Random
    ts: int = 0
    keys: int = 0

    def append(self, round_no: int) -> None:
        """One batch per source (sometimes none): a few known keys and a new one; ``dim`` and
        ``fact`` records carry sequence values, some of them older than earlier ones."""
        rng = self.rng
        self.keys += 2 if self.keys else 4
        keys = list(range(1, self.keys + 1))
        batches: dict[str, list[str]] = {name: [] for name in SOURCES}
        for k in rng.sample(keys, 3):
            batches["a"].append(f"({k}, {rng.randint(1, 9)})")
        for k in rng.sample(keys, 2):
            batches["b"].append(f"({k}, {10 * rng.randint(1, 9)})")
        for k in rng.sample(keys, 3):
            self.ts += 10
            late = self.ts - rng.choice((0, 0, 15))  # unique: ts moves by 10, late by 15
            batches["dim"].append(f"({k}, 'g{rng.randint(0, 3)}', {late})")
        for k in rng.sample(keys, 3):
            self.ts += 10
            late = self.ts - rng.choice((0, 0, 15))
            batches["fact"].append(f"({k}, {rng.randint(1, 99)}, {late})")
        skipped = rng.choice([None, "a", "dim"]) if round_no else None
        for name, values in batches.items():
            if name != skipped:
                self.worker.sql(f"INSERT INTO {self.catalog}.src.{name} VALUES {', '.join(values)}")


@dataclass
class Race:
    project: Path
    worker: SparkWorker
    catalog: str
    logs: Path
    rng: random.Random
    notes: list[str] = field(default_factory=list)
    typical: float = 40.0  # seconds a round's writers took last time (kill delays scale to it)

    def start(self, name: str, crash: str | None) -> subprocess.Popen[str]:
        env = {**os.environ, "COLUMNS": "200"}
        env.pop("LAKEWIDE_CRASH_AT", None)
        if crash:
            env["LAKEWIDE_CRASH_AT"] = crash
        log = (self.logs / f"{name}.log").open("w")
        return subprocess.Popen(
            [sys.executable, "-m", "lakewide", "--project-dir", str(self.project)]
            + ["--lock-wait", "600", "run"],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env=quick_jvm(env),
            start_new_session=True,  # its own process group: SIGKILL takes the JVM too
        )

    def round(self, round_no: int) -> None:
        """Two writers together; maybe one killed (after a delay or at a crash point)."""
        # every kind of round in the first four (a short soak still meets each), then at random
        how = KINDS[round_no] if round_no < len(KINDS) else self.rng.choice(KINDS)
        victim = self.rng.randrange(2)
        crash = None
        if how == "crash":
            crash = f"{self.rng.choice(CRASH_POINTS)}:{self.rng.randint(1, 2)}"
        started = time.monotonic()
        processes = [
            self.start(f"r{round_no}w{i}", crash if i == victim else None) for i in range(2)
        ]
        delay = self.rng.uniform(0.2, 1.1) * self.typical
        if how == "delay":
            try:
                processes[victim].wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.killpg(processes[victim].pid, signal.SIGKILL)
        codes = [p.wait(timeout=900) for p in processes]
        if how == "none":
            self.typical = time.monotonic() - started
        self.notes.append(f"round {round_no}: {how} {crash or f'{delay:.1f}s'} -> {codes}")
        for i, code in enumerate(codes):
            killable = how != "none" and i == victim
            text = (self.logs / f"r{round_no}w{i}.log").read_text()
            allowed = (0, -signal.SIGKILL) if killable else (0,)
            assert code in allowed, f"{self.notes[-1]}: writer {i}\n{text}"

    # ------------------------------------------------------------------ reading the catalog
    def meta(self, table: str) -> TableMeta:
        rows = self.worker.sql(
            f"SELECT snapshot_id, parent_id, operation, summary FROM {table}.snapshots"
        )
        current = self.worker.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'")
        snapshots = {r[0]: Snapshot(r[0], r[1], r[2] or "", dict(r[3] or {})) for r in rows}
        return TableMeta(current[0][0] if current else None, snapshots)

    def offsets(self, table: str) -> dict[str, int]:
        found = last_offsets(self.meta(table))
        assert found is not None, f"{table} has no lakewide commit"
        return {key.split(":", 1)[1]: value for key, value in found.items() if value is not None}

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        return sorted((tuple(r) for r in self.worker.sql(query)), key=repr)

    def at(self, table: str, snapshot: int | None, columns: str) -> list[tuple[Any, ...]]:
        if snapshot is None:
            return []
        return self.rows(f"SELECT {columns} FROM {table} VERSION AS OF {snapshot}")


def _counters(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    out: dict[int, list[Any]] = {}
    for rows, column in ((a, 1), (b, 2)):
        for k, value in rows:
            row = out.setdefault(k, [k, None, None, 0])
            row[column] = (row[column] or 0) + value
            row[3] += 1
    return sorted((tuple(r) for r in out.values()), key=repr)


def _wide(dim: list[tuple[Any, ...]], fact: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    records = [(0, {"k": k, "g": g, "ts": ts}) for k, g, ts in dim]
    records += [(1, {"k": k, "amount": amount, "ts": ts}) for k, amount, ts in fact]
    folded = bootstrap(records, ["k"], ["ts"])
    return sorted(
        ((r["k"], r.get("g"), r.get("amount"), r["ts"]) for r in folded.values()), key=repr
    )


def _groups(wide: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    out: dict[str, list[Any]] = {}
    for _, g, amount, _ in wide:
        if g is not None:
            row = out.setdefault(g, [g, None, 0])
            row[1] = amount if row[1] is None else row[1] + (amount or 0)
            row[2] += 1
    return sorted((tuple(r) for r in out.values()), key=repr)


def check(race: Race, everything: bool = False) -> None:
    """Every model equals the oracle at the offsets of its last commit; ``everything``: and
    those offsets are the sources' current snapshots."""
    cat = race.catalog
    src, ns = f"{cat}.src", f"{cat}.analytics"
    where = race.notes[-1] if race.notes else "first run"

    def current(table: str) -> int | None:
        return race.meta(table).current

    m = race.offsets(f"{ns}.m")
    expected = _counters(
        race.at(f"{src}.a", m.get(f"{src}.a"), "k, clicks"),
        race.at(f"{src}.b", m.get(f"{src}.b"), "k, buys"),
    )
    actual_m = race.rows(f"SELECT k, clicks, buys, events FROM {ns}.m")
    assert actual_m == expected, f"{where}: m"

    wide = race.offsets(f"{ns}.wide")
    expected_wide = _wide(
        race.at(f"{src}.dim", wide.get(f"{src}.dim"), "k, g, ts"),
        race.at(f"{src}.fact", wide.get(f"{src}.fact"), "k, amount, ts"),
    )
    assert race.rows(f"SELECT k, g, amount, ts FROM {ns}.wide") == expected_wide, f"{where}: wide"

    by_group = race.offsets(f"{ns}.by_group")
    wide_then = race.at(f"{ns}.wide", by_group.get(f"{ns}.wide"), "k, g, amount, ts")
    actual_groups = race.rows(f"SELECT g, total, n FROM {ns}.by_group")
    assert actual_groups == _groups(wide_then), f"{where}: by_group"

    changes = race.meta(f"{ns}.wide__changelog")
    covered = [
        s.summary[CHANGELOG_OF] for s in changes.snapshots.values() if CHANGELOG_OF in s.summary
    ]
    assert len(covered) == len(set(covered)), f"{where}: changes written twice"

    summary = race.offsets(f"{ns}.summary")
    m_then = race.at(f"{ns}.m", summary.get(f"{ns}.m"), "k, clicks, buys, events")
    clicks = [r[1] for r in m_then if r[1] is not None]
    expected_summary = [(len(m_then), sum(clicks) if clicks else None, sum(r[3] for r in m_then))]
    assert race.rows(f"SELECT keys, clicks, events FROM {ns}.summary") == expected_summary, where

    busy = [(k, events) for k, _, _, events in actual_m if events > 1]
    assert race.rows(f"SELECT k, events FROM {ns}.busy") == sorted(busy, key=repr), where

    if everything:
        for table in ("a", "b"):
            assert m.get(f"{src}.{table}") == current(f"{src}.{table}"), table
        for table in ("dim", "fact"):
            assert wide.get(f"{src}.{table}") == current(f"{src}.{table}"), table
        assert by_group.get(f"{ns}.wide") == current(f"{ns}.wide")
        assert summary.get(f"{ns}.m") == current(f"{ns}.m")


@pytest.fixture
def race(tmp_path: Path, postgres_server: PostgresServer) -> Iterator[Race]:
    if not DRIVER.is_file():
        missing_prerequisite(
            f"the PostgreSQL JDBC driver {DRIVER} is missing; apt-get install "
            "libpostgresql-jdbc-java"
        )
    database = postgres_server.create_database("race")
    profiles = f"""\
        demo:
          target: dev
          outputs:
            dev:
              catalog: pg
              catalog_type: jdbc
              warehouse: {tmp_path / "warehouse"}
              namespace: analytics
              uri: {postgres_server.jdbc_uri(database)}
              user: {postgres_server.user}
              password: {postgres_server.password}
              spark_conf:
                spark.sql.shuffle.partitions: "2"
        """
    seed = int(os.environ.get("LAKEWIDE_RACE_SEED", time.time()))
    yield from open_race(tmp_path, profiles, "pg", seed)


def open_race(tmp_path: Path, profiles: str, catalog: str, seed: int) -> Iterator[Race]:
    """The race project under ``tmp_path`` with ``profiles``, its sources created in
    ``catalog`` by a Spark worker (closed at the end)."""
    sources = "".join(f"      - name: {name}\n" for name in SOURCES)
    project = make_project(
        tmp_path / "project",
        {
            "profiles.yml": profiles,
            "models/sources.yml": f"sources:\n  - name: src\n    schema: src\n    tables:\n{sources}",
            **MODELS,
        },
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    worker = SparkWorker(project, logs / "worker.log")
    try:
        worker.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.src")
        for name, schema in SOURCES.items():
            worker.sql(f"CREATE TABLE {catalog}.src.{name} ({schema}) USING iceberg")
        yield Race(project, worker, catalog, logs, random.Random(seed), [f"seed {seed}"])
    finally:
        worker.close()


def test_two_writers_raced_with_random_kills_apply_every_batch_once(race: Race) -> None:
    sources = Sources(race.worker, race.catalog, race.rng)
    started = time.monotonic()
    for round_no in range(ROUNDS):
        sources.append(round_no)
        race.round(round_no)
        check(race)
    sources.append(ROUNDS)
    last = race.start("last", None)
    assert last.wait(timeout=900) == 0, (race.logs / "last.log").read_text()
    race.notes.append("the last clean run")
    check(race, everything=True)
    print(json.dumps({"rounds": ROUNDS, "seconds": round(time.monotonic() - started)}))
    print("\n".join(race.notes))

"""Two ``lakewide run`` processes (two machines: two copies of one project) racing on one REST
catalog, and runs SIGKILLed mid-run there.

The race is made real with ``LAKEWIDE_PAUSE_AT`` (``lakewide.vocabulary.faults``): both
writers plan, stop before their commit, and are released together once both are there, so both
commit from the same table state in the same window. A REST catalog has no lease (``lakewide.state.lease``):
its commit check (the table's snapshot the commit was planned from) and lakewide's own checks at
commit time keep every commit, and the loser plans again from the winner's commit. Results are
checked against the plain-Python oracle of tests/integration/test_writers_race.py at each
model's offsets, against the sources' current snapshots and against a full refresh.

The catalog comes from one fixture, ``catalog``: a REST catalog server keeping its tables on S3
(moto's S3 server, tests/support/s3_server.py) here; tests/integration/test_rest_faults.py swaps it for
one with a local warehouse.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.test_writers_race import Race, Sources, check, open_race
from tests.support.cli_process import quick_jvm
from tests.support.postgres_server import missing_prerequisite
from tests.support.rest_server import RestServer, rest_classpath, start_rest
from tests.support.s3_server import S3Server, aws_bundle_jar

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.soak]

SECRET = "s3cr3t-race-value"
CREDENTIAL = f"lakewide-tests:{SECRET}"


@dataclass
class Catalog:
    """Where the tests' tables live: the profile output's catalog keys and their env vars."""

    name: str
    keys: str  # YAML lines of the profile output (indented 6 spaces)
    env: dict[str, str]
    server: RestServer


def rest_catalog(folder: Path, server_side: dict[str, str] | None = None) -> Catalog:
    """A REST catalog server of its own over ``folder`` (Iceberg's, SQLite-backed, OAuth2
    client check); ``server_side``: its tables on S3 (``warehouse_uri`` and S3FileIO)."""
    if server_side:
        options = dict(server_side)
        server = start_rest(
            folder,
            rest_classpath(folder),
            CREDENTIAL,
            warehouse_uri=options.pop("warehouse"),
            catalog_properties=options,
        )
    else:
        server = start_rest(folder, rest_classpath(folder), CREDENTIAL)
    keys = (
        "      catalog_type: rest\n"
        f'      uri: "{server.uri}"\n'
        "      credential: \"{{ env_var('LW_IT_REST_CREDENTIAL') }}\"\n"
    )
    return Catalog("rest1", keys, {"LW_IT_REST_CREDENTIAL": CREDENTIAL}, server)


@pytest.fixture(name="catalog")
def catalog_fixture(
    tmp_path_factory: pytest.TempPathFactory, s3_server: S3Server
) -> Iterator[Catalog]:
    """REST + S3: a REST catalog server of its own keeping its tables on the session's S3
    server, lakewide's profile writing there through S3FileIO with the AWS bundle."""
    jar = aws_bundle_jar()
    if jar is None:
        missing_prerequisite("iceberg-aws-bundle missing from ~/.m2 (.ci/run fetches it)")
    key_id, secret = s3_server.writer
    folder = tmp_path_factory.mktemp("rest-s3")
    server_side = {
        "warehouse": f"s3://{s3_server.bucket}/{folder.name}-wh",
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": s3_server.endpoint,
        "s3.path-style-access": "true",
        "s3.access-key-id": key_id,
        "s3.secret-access-key": secret,
        "client.region": "us-east-1",
    }
    rest = rest_catalog(folder, server_side)
    keys = rest.keys + (
        f"      s3_endpoint: {s3_server.endpoint}\n      s3_region: us-east-1\n"
        f"      s3_path_style_access: true\n      s3_access_key_id: {key_id}\n"
        "      s3_secret_access_key: \"{{ env_var('LW_IT_S3_SECRET') }}\"\n"
        f"      jars: ['{jar}']\n"
    )
    yield Catalog(rest.name, keys, {**rest.env, "LW_IT_S3_SECRET": secret}, rest.server)
    rest.server.stop()


@pytest.fixture(name="race")
def race_fixture(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Race]:
    """The race project of test_writers_race on ``catalog``, its sources created."""
    for name, value in catalog.env.items():
        monkeypatch.setenv(name, value)
    profiles = (
        f"demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: {catalog.name}\n"
        f"{catalog.keys}      namespace: analytics\n"
        '      spark_conf:\n        spark.sql.shuffle.partitions: "2"\n'
    )
    yield from open_race(tmp_path, profiles, catalog.name, 29)


@dataclass
class Writer:
    """One finished ``lakewide run`` of a copy of the race project."""

    code: int
    log: str
    project: Path


def start(race: Race, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """``lakewide run ARGS`` in a copy of the project named ``name`` (its own target/)."""
    copy = race.project.parent / name
    if not copy.exists():
        shutil.copytree(race.project, copy, ignore=shutil.ignore_patterns("target"))
    environment = quick_jvm({**os.environ, "COLUMNS": "200", **env})
    return subprocess.Popen(
        [sys.executable, "-m", "lakewide", "--project-dir", str(copy), "run", *args],
        stdout=(race.logs / f"{name}.log").open("w"),
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        start_new_session=True,  # its own process group: a SIGKILL takes its JVM too
    )


def finish(race: Race, name: str, process: subprocess.Popen[str]) -> Writer:
    code = process.wait(timeout=900)
    return Writer(code, (race.logs / f"{name}.log").read_text(), race.project.parent / name)


def run(race: Race, name: str, *args: str, env: dict[str, str] | None = None) -> Writer:
    """One ``lakewide run`` to its end."""
    return finish(race, name, start(race, name, list(args), env or {}))


def together(
    race: Race, label: str, *selections: list[str], at_gate: Callable[[], None] = lambda: None
) -> list[Writer]:
    """One writer per selection, each held before its first commit until all are there, then
    (after ``at_gate``) released at once."""
    gate = race.logs / f"gate-{label}"
    gate.mkdir()
    env = {"LAKEWIDE_PAUSE_AT": f"before-commit:{gate}"}
    names = [f"w{i}" for i in range(len(selections))]
    processes = [start(race, n, s, env) for n, s in zip(names, selections, strict=True)]
    deadline = time.monotonic() + 600
    while len(list(gate.glob("*.paused"))) < len(processes):
        ended = [n for n, p in zip(names, processes, strict=True) if p.poll() is not None]
        assert not ended and time.monotonic() < deadline, [
            (race.logs / f"{n}.log").read_text() for n in ended
        ]
        time.sleep(0.1)
    at_gate()
    (gate / "go").touch()
    return [finish(race, n, p) for n, p in zip(names, processes, strict=True)]


def snapshots(race: Race, table: str) -> list[int]:
    """The table's snapshot ids, oldest first."""
    rows = race.worker.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at")
    return [r[0] for r in rows]


def assert_up_to_date(race: Race, model: str, sources: tuple[str, ...]) -> None:
    """The model's last commit recorded the sources' current snapshots."""
    offsets = race.offsets(f"{race.catalog}.analytics.{model}")
    for name in sources:
        table = f"{race.catalog}.src.{name}"
        assert offsets.get(table) == race.meta(table).current, (model, name)


def assert_full_refresh_agrees(race: Race, *models: str) -> None:
    """A full refresh of ``models`` gives the rows they hold now."""
    queries = {m: f"SELECT * FROM {race.catalog}.analytics.{m}" for m in models}
    before = {m: race.rows(q) for m, q in queries.items()}
    done = run(race, "refresh", "--full-refresh", *(f"--select={m}" for m in models))
    assert done.code == 0, done.log
    assert {m: race.rows(q) for m, q in queries.items()} == before


def bootstrap(race: Race) -> Sources:
    """A first batch in every source, every model built from it."""
    sources = Sources(race.worker, race.catalog, race.rng)
    sources.append(0)
    first = run(race, "first")
    assert first.code == 0, first.log
    check(race, everything=True)
    sources.append(0)
    return sources


def test_two_writers_race_on_different_models_then_on_one_model(race: Race) -> None:
    """(a) ``m`` and ``wide`` at once: both commit, each at its sources' current snapshots;
    (b) two runs of ``m`` at once: one commit kept, the loser plans again from it."""
    sources = bootstrap(race)
    ns = f"{race.catalog}.analytics"
    before = {m: snapshots(race, f"{ns}.{m}") for m in ("m", "wide")}
    writers = together(race, "different", ["--select=m"], ["--select=wide"])
    assert [w.code for w in writers] == [0, 0], [w.log for w in writers]
    for model in ("m", "wide"):  # one new commit each
        assert len(snapshots(race, f"{ns}.{model}")) == len(before[model]) + 1, model
    assert_up_to_date(race, "m", ("a", "b"))
    assert_up_to_date(race, "wide", ("dim", "fact"))
    check(race)  # each model is the oracle at its offsets
    assert all(SECRET not in w.log for w in writers)

    sources.append(0)
    table = f"{ns}.m"
    before_m = snapshots(race, table)
    writers = together(race, "same", ["--select=m"], ["--select=m"])
    assert all(w.code in (0, 1) for w in writers) and 0 in [w.code for w in writers], [
        w.log for w in writers
    ]
    for loser in (w for w in writers if w.code == 1):  # gave up: says which model, and why
        assert "another writer committed to" in loser.log and "analytics.m" in loser.log
    after = snapshots(race, table)
    assert after[: len(before_m)] == before_m  # every earlier commit kept
    assert len(after) == len(before_m) + 1  # the batch merged by one writer only
    results = [
        json.loads((w.project / "target" / "run_results.json").read_text())["results"][0]
        for w in writers
    ]
    print("\n" + "\n".join(f"writer {i}: {r}" for i, r in enumerate(results)))
    assert sorted(len(r["commits"]) for r in results) == [0, 1], results
    [loser] = [r for r in results if not r["commits"]]  # planned again from the winner's commit
    assert all(r["start"] == r["end"] for r in loser["ranges"]), loser
    assert_up_to_date(race, "m", ("a", "b"))
    check(race)
    again = run(race, "again", "--select=m")  # a following run: nothing left to apply
    assert again.code == 0, again.log
    assert snapshots(race, table) == after
    assert_full_refresh_agrees(race, "m")  # wide: the oracle, above (a batch came since)
    assert all(SECRET not in w.log for w in writers)


def test_runs_killed_mid_run_leave_no_table_half_written_and_the_next_is_exact(
    race: Race,
) -> None:
    """SIGKILL (``LAKEWIDE_CRASH_AT``) before and after the run's first commit, each followed by
    a clean run; a new batch for each."""
    sources = bootstrap(race)
    ns = f"{race.catalog}.analytics"
    models = ("m", "wide", "by_group", "summary")
    for step, point in enumerate(("before-commit:1", "after-commit:1")):
        if step:
            sources.append(0)
        before = {m: snapshots(race, f"{ns}.{m}") for m in models}
        killed = run(race, f"killed-{point}", env={"LAKEWIDE_CRASH_AT": point})
        assert killed.code == -signal.SIGKILL, killed.log
        after = {m: snapshots(race, f"{ns}.{m}") for m in models}
        new = {m: len(after[m]) - len(before[m]) for m in models}
        assert all(after[m][: len(before[m])] == before[m] for m in models)
        # one commit at most (the one the kill followed), each model the oracle at its offsets
        assert sum(new.values()) == (1 if point.startswith("after") else 0), (point, new)
        check(race)
        again = run(race, f"again-{point}")
        assert again.code == 0, again.log
        check(race, everything=True)
    assert_full_refresh_agrees(race, *models)

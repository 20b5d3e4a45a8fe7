"""Per-model leases on a PostgreSQL catalog database: exclusive, named, gone with their holder."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from lakewide.project.profiles import Output
from lakewide.state.lease import (
    LeaseBusyError,
    LeaseLostError,
    NoLeases,
    PostgresLeases,
    model_leases,
)
from tests.support.postgres_server import PostgresServer, missing_prerequisite

REPO = Path(__file__).resolve().parents[2]


def jdbc_output(uri: str, user: str | None = None, password: str | None = None) -> Output:
    return Output(
        catalog_type="jdbc",
        uri=uri,
        warehouse="/tmp/wh",
        user=user,
        password=None if password is None else SecretStr(password),
    )


def test_a_postgres_jdbc_catalog_has_leases_others_none() -> None:
    found = model_leases(jdbc_output("jdbc:postgresql://db.example:6543/cat", "lw", "s3cret"))
    assert isinstance(found, PostgresLeases)
    assert found.uri == "postgresql://lw:s3cret@db.example:6543/cat"
    for other in (
        jdbc_output("jdbc:sqlite:/tmp/catalog.db"),
        Output(catalog_type="hadoop", warehouse="/tmp/wh"),
        Output(catalog_type="rest", uri="http://localhost:8181"),
    ):
        assert isinstance(model_leases(other), NoLeases)


@pytest.fixture
def server(postgres_server: PostgresServer) -> PostgresServer:
    try:
        import psycopg2  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        missing_prerequisite("psycopg2 missing; pip install 'pyiceberg[sql-postgres]'")
    return postgres_server


def leases(server: PostgresServer, wait: float) -> PostgresLeases:
    found = model_leases(jdbc_output(server.jdbc_uri(), server.user, server.password), wait)
    assert isinstance(found, PostgresLeases)
    return found


def test_a_lease_is_exclusive_per_model_and_names_its_holder(server: PostgresServer) -> None:
    first, second = leases(server, 5), leases(server, 0.3)
    try:
        with first.hold("pg.analytics.m"):
            first.check()
            with second.hold("pg.analytics.other"):  # another model: not blocked
                pass
            started = time.monotonic()
            with pytest.raises(LeaseBusyError) as busy, second.hold("pg.analytics.m"):
                pass
            assert time.monotonic() - started >= 0.3
            assert "lakewide pid" in str(busy.value) and "pg.analytics.m" in str(busy.value)
            assert "nothing was written" in str(busy.value)
        with second.hold("pg.analytics.m"):  # released at the end of the block
            second.check()
    finally:
        first.close()
        second.close()


def test_a_killed_holder_releases_its_lease(server: PostgresServer, tmp_path: Path) -> None:
    script = tmp_path / "hold.py"
    script.write_text(
        "import sys, time\n"
        "from lakewide.state.lease import PostgresLeases\n"
        "with PostgresLeases(sys.argv[1]).hold('pg.analytics.m'):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(600)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, str(script), leases(server, 0).uri],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    waiting = leases(server, 10)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LeaseBusyError), leases(server, 0).hold("pg.analytics.m"):
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        started = time.monotonic()
        with waiting.hold("pg.analytics.m"):
            assert time.monotonic() - started < 5
    finally:
        holder.kill()
        waiting.close()


def test_a_broken_lease_connection_stops_the_commit(server: PostgresServer) -> None:
    held = leases(server, 1)
    try:
        with held.hold("pg.analytics.m"):
            held.check()
            server.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name LIKE 'lakewide pid %'",
                db=server.database,
            )
            with pytest.raises(LeaseLostError, match="nothing was committed"):
                held.check()
    finally:
        held.close()

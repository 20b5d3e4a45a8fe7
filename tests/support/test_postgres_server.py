"""The test session's private PostgreSQL server: reachable with the user's password only."""

from __future__ import annotations

import pytest

from tests.support.postgres_server import PostgresServer, missing_prerequisite


def test_server_takes_the_password_and_refuses_a_wrong_one(postgres_server: PostgresServer) -> None:
    try:
        import sqlalchemy
        import sqlalchemy.exc
    except ImportError:
        missing_prerequisite('pyiceberg SQL extras missing; pip install -e ".[test]"')
    engine = sqlalchemy.create_engine(postgres_server.sqlalchemy_uri())
    with engine.connect() as conn:
        row = conn.execute(sqlalchemy.text("select current_user, current_database()")).one()
    assert tuple(row) == (postgres_server.user, postgres_server.database)
    wrong = postgres_server.sqlalchemy_uri().replace(postgres_server.password, "wrong")
    with pytest.raises(sqlalchemy.exc.OperationalError, match="password authentication failed"):
        sqlalchemy.create_engine(wrong).connect()
    assert postgres_server.create_database("second") == "second"
    assert "second" in postgres_server.psql("select datname from pg_database")


def test_a_missing_prerequisite_skips_locally_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        missing_prerequisite("apt-get install postgresql")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI: apt-get install postgresql"):
        missing_prerequisite("apt-get install postgresql")

"""A private PostgreSQL server for the test session (JDBC catalogs on a real database).

API:

* ``postgres_server`` (pytest fixture, session scope; conftest.py imports it): a running
  ``PostgresServer`` on 127.0.0.1 and a free port, stopped (and its data folder removed) at the
  end of the session. Its database ``lakewide`` is owned by user ``lakewide`` with password
  ``server.password``; password authentication (scram-sha-256) is enforced over TCP.
* ``PostgresServer``: ``host``, ``port``, ``database``, ``user``, ``password``, ``data_dir``;
  ``jdbc_uri(db=None)`` (``jdbc:postgresql://127.0.0.1:PORT/DB``),
  ``sqlalchemy_uri(db=None)`` (``postgresql+psycopg2://USER:PASSWORD@127.0.0.1:PORT/DB``),
  ``create_database(name)`` (a new, empty database owned by ``user``: one per test keeps
  catalogs apart), ``psql(sql, db=None)`` (runs SQL as the superuser, returns stdout),
  ``stop()``.
* ``start_postgres()``: start one outside pytest (call ``stop()`` when done).
* ``postgres_missing()``: why no server can start here (the install command), or None.
* ``missing_prerequisite(reason)``: ``pytest.skip(reason)`` locally, ``pytest.fail(reason)``
  when the environment variable ``CI`` is set (CI must run these tests, not skip them).

The server runs as a non-root user: as root (CI, containers) through ``runuser -u postgres``
with a data folder that user owns; otherwise as the current user.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

INSTALL_POSTGRES = "apt-get install postgresql"
_SUPERUSER = "lw_admin"


def missing_prerequisite(reason: str) -> None:
    """Skip the test locally; fail it in CI (``CI`` set), where every prerequisite is installed."""
    if os.environ.get("CI"):
        pytest.fail(f"CI: {reason}")
    pytest.skip(reason)


def _bin_dir() -> Path | None:
    """The folder holding ``initdb``/``pg_ctl``/``psql``: PATH, else Debian's newest version."""
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent  # Debian links initdb, not psql, into PATH
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def postgres_missing() -> str | None:
    """Why a private PostgreSQL server cannot start here (naming the install command), or None."""
    folder = _bin_dir()
    if folder is None or not (folder / "pg_ctl").is_file():
        return f"PostgreSQL server binaries (initdb, pg_ctl) not found; {INSTALL_POSTGRES}"
    if os.geteuid() == 0 and not _user_exists("postgres"):
        return (
            f"running as root and there is no 'postgres' user to run the server; {INSTALL_POSTGRES}"
        )
    return None


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Stop a test server's own process: SIGTERM, then SIGKILL after 20 s; waited for."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class PostgresServer:
    """A running private server; see the module docstring."""

    bin_dir: Path
    data_dir: Path
    port: int
    password: str
    host: str = "127.0.0.1"
    database: str = "lakewide"
    user: str = "lakewide"
    _as_postgres: bool = field(default=False, repr=False)

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = list(args)
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.data_dir.parent)
        if check and done.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stderr.strip()}")
        return done

    def jdbc_uri(self, db: str | None = None) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{db or self.database}"

    def sqlalchemy_uri(self, db: str | None = None) -> str:
        return (
            f"postgresql+psycopg2://{self.user}:{self.password}@{self.host}:{self.port}/"
            f"{db or self.database}"
        )

    def psql(self, sql: str, db: str | None = None) -> str:
        """Run ``sql`` as the superuser over the server's socket; its stdout."""
        done = self._run(
            str(self.bin_dir / "psql"),
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.data_dir),
            "-p",
            str(self.port),
            "-U",
            _SUPERUSER,
            "-d",
            db or "postgres",
            "-c",
            sql,
        )
        return done.stdout

    def create_database(self, name: str) -> str:
        """A new empty database ``name`` owned by ``user``; returns ``name``."""
        self.psql(f'CREATE DATABASE "{name}" OWNER "{self.user}"')
        return name

    def stop(self) -> None:
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data_dir),
            "-m",
            "fast",
            "stop",
            check=False,
        )
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)


def start_postgres() -> PostgresServer:
    """initdb + pg_ctl start a private server, with database and user ``lakewide``."""
    reason = postgres_missing()
    if reason:
        raise RuntimeError(reason)
    bin_dir = _bin_dir()
    assert bin_dir is not None
    as_postgres = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="lakewide-pg-"))
    data_dir = base / "data"
    data_dir.mkdir()
    if as_postgres:
        shutil.chown(base, "postgres")
        shutil.chown(data_dir, "postgres")
    password = secrets.token_hex(12)
    last_error = ""
    for _attempt in range(5):
        server = PostgresServer(bin_dir, data_dir, free_port(), password, _as_postgres=as_postgres)
        if not (data_dir / "PG_VERSION").exists():
            server._run(
                str(bin_dir / "initdb"),
                "-D",
                str(data_dir),
                "-U",
                _SUPERUSER,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",
            )
        options = (
            f"-p {server.port} -c listen_addresses=127.0.0.1 -k {data_dir} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        started = server._run(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data_dir),
            "-o",
            options,
            "-l",
            str(data_dir / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
            check=False,
        )
        if started.returncode == 0:
            try:
                server.psql(f"CREATE USER \"{server.user}\" PASSWORD '{password}'")
                server.create_database(server.database)
            except BaseException:
                server.stop()
                raise
            return server
        with contextlib.suppress(OSError):
            last_error = (data_dir / "server.log").read_text()[-2000:]
        last_error = f"{started.stdout}{started.stderr}{last_error}"
        time.sleep(0.5)  # most likely the port was taken meanwhile: try another
    shutil.rmtree(base, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start:\n{last_error}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's private PostgreSQL server (skipped locally / failed in CI when missing)."""
    reason = postgres_missing()
    if reason:
        missing_prerequisite(reason)
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()

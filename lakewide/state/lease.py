"""Several writers on one catalog: a per-model lease in the catalog's PostgreSQL database.

A run holds a model's lease from the moment it reads the model's metadata (to plan) until its
last commit, so two ``lakewide run`` processes (two machines) on one JDBC catalog never plan
the same model from the same offsets: the second waits, then plans from the first one's commit.
The lease is a PostgreSQL session advisory lock: the server drops it when the holder's
connection ends, so a killed run never leaves it behind. Catalogs without one (SQLite, REST,
Hive) rely on the checks at commit time alone (``lakewide.run.models.key_table_run``); a hadoop
warehouse has its own lock for the whole run (``lakewide.lock``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import time
from collections.abc import Iterator
from typing import Any, Protocol

from lakewide.project.jdbc import database_kind, libpq_uri
from lakewide.project.profiles import Output
from lakewide.vocabulary.errors import ModelRunError, RuntimeSetupError

#: advisory-lock key space of lakewide's leases (the first half of the two-int key)
_NAMESPACE = 0x1A4E


class LeaseBusyError(ModelRunError):
    """Another process held a model's lease for longer than the wait (exit code 1)."""


class LeaseLostError(ModelRunError):
    """The connection that held a model's lease broke before a commit (exit code 1)."""


class Leases(Protocol):
    """Per-model leases of one run."""

    def hold(self, relation: str) -> contextlib.AbstractContextManager[object]:
        """Hold ``relation``'s lease (waiting for it) while the block runs."""

    def check(self) -> None:
        """Raise LeaseLostError when a held lease may have been lost (before a commit)."""

    def close(self) -> None:
        """Release everything held."""


class NoLeases:
    """Catalogs without a lease database: nothing to hold."""

    def hold(self, relation: str) -> contextlib.AbstractContextManager[object]:
        """See Leases.hold."""
        return contextlib.nullcontext()

    def check(self) -> None:
        """See Leases.check."""

    def close(self) -> None:
        """See Leases.close."""


def lease_key(relation: str) -> int:
    """The advisory-lock key of a model's table (second half of the two-int key): a stable
    31-bit hash of its name."""
    digest = hashlib.blake2b(relation.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


class PostgresLeases:
    """Advisory locks on one connection to the catalog's database, opened on first use."""

    def __init__(self, uri: str, wait_seconds: float = 30.0, password: str = "") -> None:
        """``uri``: libpq's (lakewide.project.jdbc.libpq_uri); ``password``: masked in messages."""
        self.uri, self.wait_seconds, self._password = uri, wait_seconds, password
        self._connection: Any = None
        self._held: set[int] = set()

    def _connect(self) -> Any:
        if self._connection is None:
            try:
                import psycopg2
            except ImportError:
                raise RuntimeSetupError(
                    "several writers on a PostgreSQL catalog need psycopg2: "
                    "pip install 'lakewide[jdbc]'"
                ) from None
            name = f"lakewide pid {os.getpid()} on {socket.gethostname()}"[:63]
            try:
                self._connection = psycopg2.connect(
                    self.uri, application_name=name, connect_timeout=10
                )
            except psycopg2.Error as err:
                lines = str(err).strip().splitlines()
                detail = lines[0] if lines else type(err).__name__
                if self._password:
                    detail = detail.replace(self._password, "***")
                raise ModelRunError(
                    f"the catalog database did not answer when taking a model's lease "
                    f"({detail}); check the profile's uri, user and password"
                ) from None
            self._connection.autocommit = True
        return self._connection

    def _query(self, sql: str, *args: object) -> Any:
        with self._connect().cursor() as cursor:
            cursor.execute(sql, args)
            return cursor.fetchone()

    @contextlib.contextmanager
    def hold(self, relation: str) -> Iterator[object]:
        """See Leases.hold; LeaseBusyError naming the holder after ``wait_seconds``."""
        key = lease_key(relation)
        deadline = time.monotonic() + self.wait_seconds
        while not self._query("SELECT pg_try_advisory_lock(%s, %s)", _NAMESPACE, key)[0]:
            if time.monotonic() >= deadline:
                raise LeaseBusyError(
                    f"another lakewide process ({self._holder(key)}) has been writing "
                    f"{relation} for more than {self.wait_seconds:.0f}s; nothing was written "
                    "here. Run again when it ends, or raise --lock-wait"
                )
            time.sleep(0.2)
        self._held.add(key)
        try:
            yield self
        finally:
            self._held.discard(key)
            with contextlib.suppress(Exception):  # a broken connection released it already
                self._query("SELECT pg_advisory_unlock(%s, %s)", _NAMESPACE, key)

    def _holder(self, key: int) -> str:
        found = self._query(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a "
            "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
            "AND l.classid = %s AND l.objid = %s LIMIT 1",
            _NAMESPACE,
            key,
        )
        return found[0] if found and found[0] else "unknown"

    def check(self) -> None:
        """See Leases.check: the connection answers and still holds every lease."""
        if not self._held:
            return
        try:
            count = self._query(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND pid = pg_backend_pid() AND classid = %s AND objid = ANY(%s)",
                _NAMESPACE,
                list(self._held),
            )[0]
        except Exception as err:  # noqa: BLE001 - psycopg2 errors have many types
            count, cause = -1, str(err).strip().splitlines()[0] if str(err).strip() else ""
        else:
            cause = "the lock is gone"
        if count != len(self._held):
            raise LeaseLostError(
                f"the connection holding this model's lease broke ({cause}); nothing was "
                "committed. Run again"
            )

    def close(self) -> None:
        """See Leases.close: the connection ends, and every lease with it."""
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection, self._held = None, set()


def model_leases(output: Output, wait_seconds: float = 30.0) -> Leases:
    """The leases of ``output``'s catalog: PostgreSQL advisory locks for a JDBC catalog on
    PostgreSQL, else none."""
    if output.catalog_type != "jdbc" or database_kind(output.uri) != "postgresql":
        return NoLeases()
    password = output.password.get_secret_value() if output.password else ""
    return PostgresLeases(libpq_uri(output), wait_seconds, password)

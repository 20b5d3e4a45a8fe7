"""One writing lakewide process per hadoop warehouse: an exclusive lock file next to the data."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

from lakewide.project.profiles import Output, warehouse_path
from lakewide.vocabulary.errors import LakewideError

LOCK_FILE = ".lakewide.lock"


class LockBusyError(LakewideError):
    """Another lakewide process holds the warehouse lock (exit code 2)."""


class WarehouseLock:
    """``with WarehouseLock(path, wait_seconds):`` holds ``path`` exclusively (flock).

    The kernel drops the lock when the holder dies, so a killed run never leaves it behind.
    """

    def __init__(self, path: Path, wait_seconds: float = 30.0) -> None:
        self.path = path
        self.wait_seconds = wait_seconds
        self._fd: int | None = None

    def __enter__(self) -> WarehouseLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                    os.close(fd)
                    raise LockBusyError(
                        f"another lakewide process (pid {holder}) is writing this warehouse; "
                        f"waited {self.wait_seconds:.0f}s for {self.path}. Retry when it ends, "
                        "raise --lock-wait, or use a REST/JDBC catalog for concurrent writers"
                    ) from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_path(output: Output) -> Path | None:
    """The lock file of a hadoop warehouse on local disk (plain path or ``file:`` URI), else None.

    Other catalogs arbitrate concurrent commits themselves; a hadoop warehouse on a remote
    file system (``s3://``, ``hdfs://``) cannot be locked from here (one writer only).
    """
    if output.catalog_type != "hadoop":
        return None
    folder = warehouse_path(output.warehouse)
    return None if folder is None else folder / LOCK_FILE


def warehouse_lock(output: Output, wait_seconds: float = 30.0) -> AbstractContextManager[object]:
    """The lock a writing command holds for ``output``'s warehouse (a no-op when it has none)."""
    path = lock_path(output)
    return contextlib.nullcontext() if path is None else WarehouseLock(path, wait_seconds)

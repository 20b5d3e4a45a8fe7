"""Run events: what library code reports while it works, for whoever listens (the CLI's live
progress, ``--log-format json``). Library code emits; it never prints.

Listeners are process-wide; the model an event belongs to is the one the emitting thread is
running (``running``), so events of models run concurrently (``--threads``) stay apart.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: dbt's event names and codes where the event is the same
CODES = {
    "MainReportVersion": "A001",
    "SQLQuery": "E016",
    "LogModelResult": "Q012",
    "NodeStart": "Q024",
    "NodeFinished": "Q025",
    "LogSkipResult": "Q016",
    "LogFreshnessResult": "Q018",
    "StatsLine": "Z023",
    "MainEncounteredError": "Z002",
    "Note": "Z050",
    "TableDiff": "L001",  # lakewide's own
    "TableRead": "L002",  # a read through the DataFrame API (not SQL)
    "SparkStarting": "L003",  # the command starts its SparkSession
    "SparkStarted": "L004",  # ... and it is up (data: seconds)
    "StepStart": "L005",  # a phase of a command starts (seeds, a read without Spark)
    "NullKeys": "L006",  # the NULL-key count answered by the files' statistics
}


@dataclass(frozen=True)
class Event:
    """One event: dbt's ``name``, a human message, a level and the model it concerns."""

    name: str
    msg: str
    level: str = "info"  # debug | info | warn | error
    node: str | None = None  # the model being run by the emitting thread
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def code(self) -> str:
        return CODES.get(self.name, "Z050")


Listener = Callable[[Event], None]
_listeners: list[Listener] = []
_lock = threading.Lock()
_local = threading.local()


def subscribe(listener: Listener) -> None:
    """Send every event from now on to ``listener``."""
    with _lock:
        _listeners.append(listener)


def listeners() -> list[Listener]:
    with _lock:
        return list(_listeners)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send every event emitted meanwhile (by any thread) to ``listener``."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


@contextlib.contextmanager
def running(node: str) -> Iterator[None]:
    """Events this thread emits meanwhile concern model ``node``."""
    previous = getattr(_local, "node", None)
    _local.node = node
    try:
        yield
    finally:
        _local.node = previous


def emit(name: str, msg: str, level: str = "info", **data: Any) -> None:
    """Report an event to the listeners (nothing happens without one)."""
    if not _listeners:
        return
    event = Event(name, msg, level, getattr(_local, "node", None), data)
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(event)

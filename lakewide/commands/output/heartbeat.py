"""No long silence in text mode: while a step of a command is under way (Spark starting, the
seeds, a model, a unit test), a line on stderr whenever nothing was printed for
``QUIET_SECONDS`` (a first MERGE, a seed's first write, a slow unit test), saying how long
since the step started, so that a log or a terminal shows the command alive. A command that
waits on purpose (``run --watch`` between rounds, ``docs serve``) has no step under way."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

QUIET_SECONDS = 3.5  # a line within 5 s of the last, with room for a busy machine


class NotedStream:
    """stdout or stderr as it is when written to (a test's, rich's live proxy), noting when
    each write happened."""

    def __init__(self, name: str, watch: Heartbeat) -> None:
        self.name, self.watch = name, watch

    @property
    def stream(self) -> TextIO:
        stream: TextIO = getattr(sys, self.name)
        if self.name == "stderr":  # the live view's own console writes past rich's proxy
            stream = getattr(stream, "rich_proxied_file", stream)
        return stream

    def write(self, text: str) -> int:
        self.watch.noted()
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def __getattr__(self, name: str) -> Any:
        if name == "rich_proxied_file":  # stdout's lines go through the live view's proxy,
            raise AttributeError(name)  # printed above it instead of into it
        return getattr(self.stream, name)


class Heartbeat:
    """The last write and the last step; a daemon thread that speaks after a silence."""

    def __init__(self) -> None:
        self.active = False
        self.last_write = time.monotonic()
        self.step: tuple[float, str] | None = None
        self.say: Any = None  # prints one line on stderr
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def noted(self) -> None:
        self.last_write = time.monotonic()

    def started(self, line: str) -> None:
        """A step of the command started (``line`` shown for it)."""
        self.step = (time.monotonic(), line)

    def idle(self) -> None:
        """No step is under way (the command waits on purpose): nothing to say until one
        starts."""
        self.step = None

    def begin(self, say: Any) -> None:
        """Watch from now on, printing through ``say`` (one line)."""
        with self._lock:
            self.say, self.active, self.step = say, True, None
            self.noted()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="heartbeat")
                self._thread.start()

    def end(self) -> None:
        self.active = False

    def _run(self) -> None:
        while True:
            time.sleep(0.25)
            now = time.monotonic()
            if not self.active or now - self.last_write < QUIET_SECONDS:
                continue
            if self.step is None:  # no step under way: a server, a watch between rounds
                continue
            began, line = self.step
            text = f"... still working, {now - began:.0f}s since: {line}"
            try:
                self.say(text)
            except Exception:  # noqa: BLE001 - a closed stream at exit: stop speaking
                self.active = False
            self.noted()


heartbeat = Heartbeat()

"""Where a lakewide run's time goes: seconds per plan step kind (Read, Query, Stage, Commit, ...),
measured in this process by wrapping ``StepRunner._step`` (no change to lakewide).

With ``cpu`` (a function returning the JVM's CPU seconds so far, ``run.Clock.cpu``) each step
kind also gets the JVM CPU seconds spent while its steps ran (read before and after each step,
no waiting for the JVM to settle: background work that outlasts a step is counted where it
runs). ``also`` names more methods to time the same way, by a label of their own (a call inside
a step is counted in both).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from lakewide.run.models import step_runner


class StepClock:
    """Seconds (and JVM CPU seconds) per plan step kind, summed until taken."""

    def __init__(
        self,
        cpu: Callable[[], float] | None = None,
        also: dict[str, tuple[Any, str]] | None = None,
    ) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._cpu = cpu
        self._wrap(step_runner.StepRunner, "_step", lambda args: type(args[1]).__name__)
        for label, (owner, name) in (also or {}).items():
            self._wrap(owner, name, lambda args, fixed=label: fixed)

    def _wrap(self, owner: Any, name: str, label: Callable[[tuple[Any, ...]], str]) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started, cpu = time.perf_counter(), self._cpu() if self._cpu else 0.0
            try:
                return original(*args, **kwargs)
            finally:
                kind = label(args)
                self.seconds[kind] += time.perf_counter() - started
                self.cpu_seconds[kind] += self._cpu() - cpu if self._cpu else 0.0
                self.calls[kind] += 1

        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        """Seconds per step kind since the last take (then cleared)."""
        return {kind: round(v["s"], 2) for kind, v in self.take_all().items()}

    def take_all(self) -> dict[str, dict[str, float]]:
        """Per step kind: wall seconds ``s``, JVM CPU seconds ``cpu`` (with ``cpu`` given) and
        the calls ``n`` since the last take (then cleared)."""
        taken = {
            kind: {"s": round(seconds, 3), "n": self.calls[kind]}
            | ({"cpu": round(self.cpu_seconds[kind], 3)} if self._cpu else {})
            for kind, seconds in self.seconds.items()
        }
        self.seconds.clear()
        self.cpu_seconds.clear()
        self.calls.clear()
        return taken

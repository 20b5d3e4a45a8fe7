"""Building a wide model's trees with Python's cyclic garbage collector paused.

sqlglot nodes point at their parents, so every tree is a web of reference cycles, and a wide
model's statements and plans are millions of them: the collector's passes over the young
objects took half of ``compile --all-plans`` at 64 sources x 16 columns (11.5 s of CPU with
it, 5.6 s paused; 350 MB and 540 MB at the peak). The trees a compile builds live until it has
printed them, so a pass finds little to free. Paused for the length of one model's build; the
cycles left are collected by the next pass once it resumes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees what it can) until
    the last of the nested or concurrent (``--threads``) callers leaves; then resume it if it
    was running when the first came in."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()

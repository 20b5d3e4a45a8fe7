"""Run a DAG's nodes in dependency order, up to ``threads`` at once.

A node starts once every upstream node of the run is done; a failed node skips its downstream
nodes, and so does a node whose ``done`` says so (a failing test of it); ``fail_fast`` skips
every node not started yet once one failed (nodes already running finish). One thread runs
everything on the caller's thread, in the given order. A skipped node's reason names the cause
at its root: ``upstream a failed`` for every node downstream of a failed ``a``.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol, TypeVar


class Outcome(Protocol):
    name: str
    status: str  # success | error | skipped


R = TypeVar("R", bound=Outcome)


def schedule(
    order: list[str],
    upstream: dict[str, list[str]],
    work: Callable[[str], R],
    skip: Callable[[str, str], R],
    done: Callable[[R], bool | str | None],
    *,
    threads: int = 1,
    fail_fast: bool = False,
) -> dict[str, R]:
    """Run ``work(name)`` for each name of ``order`` (a topological order); ``skip(name, why)``
    makes the outcome of a node not run; ``done`` sees every outcome (on the caller's thread,
    as nodes finish) and returns True, or the reason to give them, to skip that node's
    downstream nodes too. ``upstream``: the run's nodes each node waits for."""
    results: dict[str, R] = {}
    blocked: dict[str, str] = {}  # node -> why its downstream nodes are skipped
    first_failure: list[str] = []

    def finish(result: R, skipped_because: str | None = None) -> None:
        name = result.name
        results[name] = result
        if result.status == "error" and not first_failure:
            first_failure.append(name)
        told = done(result)
        if isinstance(told, str):
            blocked[name] = told
        elif skipped_because is not None:
            blocked[name] = skipped_because  # the root cause, passed on downstream
        elif told or result.status != "success":
            blocked[name] = f"upstream {name} failed"

    def reason(name: str) -> str | None:
        if fail_fast and first_failure:
            return f"--fail-fast: {first_failure[0]} failed"
        failed = [u for u in upstream.get(name, []) if u in blocked]
        if failed:
            return blocked[failed[0]]
        return None

    def skip_for(name: str, why: str) -> None:
        finish(skip(name, why), why)

    if threads <= 1:
        for name in order:
            why = reason(name)
            if why is None:
                finish(work(name))
            else:
                skip_for(name, why)
        return results

    pending, members = list(order), set(order)
    running: dict[Future[R], str] = {}
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lakewide") as pool:
        while pending or running:
            for name in list(pending):  # in run order
                if any(u in members and u not in results for u in upstream.get(name, [])):
                    continue  # an upstream node is still to run or running
                why = reason(name)
                if why is None and len(running) >= threads:
                    continue  # ready: waits for a free thread
                pending.remove(name)
                if why is None:
                    running[pool.submit(work, name)] = name
                else:
                    skip_for(name, why)
            if not running:
                continue
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                running.pop(future)
                finish(future.result())
    return results

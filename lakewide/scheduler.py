"""Run a DAG's nodes in dependency order, up to ``threads`` at once.

A node starts once every upstream node of the run is done; a failed node skips its downstream
nodes; ``fail_fast`` skips every node not started yet once one failed (nodes already running
finish). One thread runs everything on the caller's thread, in the given order.
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
    done: Callable[[R], bool | None],
    *,
    threads: int = 1,
    fail_fast: bool = False,
) -> dict[str, R]:
    """Run ``work(name)`` for each name of ``order`` (a topological order); ``skip(name, why)``
    makes the outcome of a node not run; ``done`` sees every outcome (on the caller's thread,
    as nodes finish) and returns True to skip that node's downstream nodes too.
    ``upstream``: the run's nodes each node waits for."""
    results: dict[str, R] = {}
    blocked: set[str] = set()  # failed or skipped because of a failure
    first_failure: list[str] = []

    def finish(result: R) -> None:
        results[result.name] = result
        if result.status != "success":
            blocked.add(result.name)
        if result.status == "error" and not first_failure:
            first_failure.append(result.name)
        if done(result):
            blocked.add(result.name)

    def reason(name: str) -> str | None:
        if fail_fast and first_failure:
            return f"--fail-fast: {first_failure[0]} failed"
        failed = [u for u in upstream.get(name, []) if u in blocked]
        if failed:
            return f"upstream {failed[0]} failed"
        return None

    if threads <= 1:
        for name in order:
            why = reason(name)
            finish(work(name) if why is None else skip(name, why))
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
                    finish(skip(name, why))
            if not running:
                continue
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                running.pop(future)
                finish(future.result())
    return results

"""``lakewide compile`` on several processes: each compiles whole models and writes their files.

Compiling is pure Python (sqlglot trees printed to text), so threads would share one core; forked
processes share the parsed project without copying it. A model that fails is compiled again in
the calling process, which raises its error as a serial compile would.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lakewide.artifacts.manifest_json import compiled_checksum
from lakewide.compiler.plans.upstream import compile_in
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import LakewideError

# a pool forks after this is set: its workers compile from the parent's parsed project
_project: list[tuple[Manifest, Path, Callable[[Path, dict[str, str]], None], bool]] = []
SERIAL_BELOW = 8  # fewer selected models than this compile in the calling process


@dataclass(frozen=True)
class Written:
    """One model compiled and written (``error``: it failed; compile it again to raise)."""

    name: str
    kind: str = ""
    files: int = 0
    checksum: dict[str, str] | None = None
    error: bool = False


def compile_one(
    manifest: Manifest,
    name: str,
    out_root: Path,
    write: Callable[[Path, dict[str, str]], None],
    all_plans: bool = False,
) -> Written:
    """Compile model ``name``, write its files (``CompiledModel.shown``) under
    ``out_root/name`` with ``write``."""
    files = compile_in(manifest, manifest.models[name]).shown(all_plans=all_plans)
    write(out_root / name, files)
    return Written(name, manifest.models[name].config.kind, len(files), compiled_checksum(files))


def _in_worker(name: str) -> Written:
    manifest, out_root, write, all_plans = _project[0]
    try:
        return compile_one(manifest, name, out_root, write, all_plans)
    except LakewideError:
        return Written(name, error=True)


def default_processes() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


def compile_all(
    manifest: Manifest,
    names: list[str],
    out_root: Path,
    write: Callable[[Path, dict[str, str]], None],
    processes: int,
    all_plans: bool = False,
) -> Iterator[Written]:
    """Each model of ``names`` compiled and written, yielded in ``names``' order."""
    forking = "fork" in multiprocessing.get_all_start_methods()
    if processes < 2 or len(names) < SERIAL_BELOW or not forking:
        for name in names:
            yield compile_one(manifest, name, out_root, write, all_plans)
        return
    _project[:] = [(manifest, out_root, write, all_plans)]
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(min(processes, len(names)), mp_context=context) as pool:
            for written in pool.map(_in_worker, names, chunksize=4):
                if written.error:  # its error, raised here as a serial compile raises it
                    written = compile_one(manifest, written.name, out_root, write, all_plans)
                yield written
    finally:
        _project.clear()

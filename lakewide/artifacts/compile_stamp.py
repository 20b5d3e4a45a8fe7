"""``target/.compile_inputs``: what the last full ``lakewide compile`` was made from, so that a
compile with nothing changed ends before parsing the project (well under a second).

The stamp holds digests only, never a value: of every file under the project's model, macro
and test folders, ``pyproject.toml`` and ``profiles.yml``, the ``--target`` and ``--vars``, the
environment variables that ``env_var()`` read and the ``LAKEWIDE_*`` ones, lakewide's own code;
and of the files it wrote under ``target/compiled/`` (a file edited or removed there compiles
again).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lakewide.project.profiles_file import ENV_READ
from lakewide.project.settings import Project
from lakewide.project.user_cache import code_digest

STAMP = ".compile_inputs"
# inputs digested before this process compiled (by ``nothing_changed``), reused by ``remember``:
# a file edited while the compile ran then differs from the stamp and compiles again next time
_SEEN: dict[str, str] = {}


def _key(project: Project, profiles: Path, options: dict[str, Any], env: Iterable[str]) -> str:
    return json.dumps([str(project.root), str(profiles), options, sorted(env)], default=str)


def _files(digest: Any, folder: Path, root: Path) -> None:
    paths = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    for path in paths:
        digest.update(f"\0{os.path.relpath(path, root)}\0".encode())
        digest.update(path.read_bytes())


def _inputs(project: Project, profiles: Path, options: dict[str, Any], env: Iterable[str]) -> str:
    digest = hashlib.sha256(code_digest().encode())
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    names = sorted({*env, *(n for n in os.environ if n.startswith("LAKEWIDE_"))})
    digest.update(json.dumps({n: os.environ.get(n) for n in names}).encode())
    for file in (project.root / "pyproject.toml", profiles):
        digest.update(f"\0{file}\0".encode() + (file.read_bytes() if file.is_file() else b""))
    for folder in {*project.model_paths, *project.macro_paths, *project.test_paths}:
        _files(digest, folder, project.root)
    return digest.hexdigest()


def _output(project: Project) -> str:
    """The files under ``target/compiled/`` by name, size and modification time (reading a
    thousand files' bytes would cost a tenth of a second; any edit changes the time)."""
    digest = hashlib.sha256()
    for folder, _dirs, files in sorted(os.walk(project.target_path / "compiled")):
        for name in sorted(files):
            stat = os.stat(os.path.join(folder, name))
            digest.update(f"{folder}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def nothing_changed(project: Project, profiles: Path, options: dict[str, Any]) -> int | None:
    """The number of models the last full compile wrote, when the project, its options and
    ``target/compiled/`` are as it left them (see the module doc); else None."""
    try:
        stamp = json.loads((project.target_path / STAMP).read_text(encoding="utf-8"))
        inputs = _inputs(project, profiles, options, stamp["env"])
        _SEEN[_key(project, profiles, options, stamp["env"])] = inputs
        same = stamp["inputs"] == inputs
        return int(stamp["models"]) if same and stamp["output"] == _output(project) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget(project: Project) -> None:
    """Drop the stamp (a compile is about to change what it describes)."""
    (project.target_path / STAMP).unlink(missing_ok=True)


def remember(project: Project, profiles: Path, options: dict[str, Any], models: int) -> None:
    """Write the stamp after a full compile of ``models`` models (``ENV_READ``: the
    environment variables it read)."""
    env = sorted(ENV_READ)
    inputs = _SEEN.get(_key(project, profiles, options, env))
    if inputs is None:
        inputs = _inputs(project, profiles, options, env)
    stamp = {"inputs": inputs, "env": env, "models": models}
    stamp["output"] = _output(project)
    path = project.target_path / STAMP
    path.write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")

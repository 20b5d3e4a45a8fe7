"""The user's cache folder for what lakewide derives from a project's text and can derive again
(compiled templates, parsed YAML, key tables' branch drivers): ``$XDG_CACHE_HOME/lakewide``,
else ``~/.cache/lakewide``.

Never inside the project, so that a command that fails leaves the project as it was; every entry
is named by a digest of what it was made from, so a stale entry is never read, and losing the
folder only costs time.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
from pathlib import Path

from lakewide import __version__


def cache_folder(kind: str) -> Path:
    """The folder keeping one kind of entry (``templates``, ``yaml``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "lakewide" / kind


def write_entry(path: Path, data: bytes) -> None:
    """Write one entry atomically (a reader never sees half of it); a cache that cannot be
    written (read-only home, full disk) is silently skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError:
        pass


@functools.cache
def code_digest() -> str:
    """lakewide's own code (every module of the package) and sqlglot's version: what an entry
    derived by lakewide's code, or a statement it compiled, is made by."""
    digest = hashlib.sha256(f"{__version__} {importlib.metadata.version('sqlglot')}".encode())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        digest.update(f"\0{path.relative_to(package)}\0".encode() + path.read_bytes())
    return digest.hexdigest()

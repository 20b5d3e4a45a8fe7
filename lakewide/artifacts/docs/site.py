"""Write the docs site: ``target/docs/index.html`` (one page, the data and the scripts inlined,
so it opens from ``file://`` without a server or a network) plus ``manifest.json`` and
``catalog.json`` beside it."""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from lakewide import __version__
from lakewide.artifacts.docs.documents import Documents

DOCS_DIR = "docs"  # under the project's target path
_SLOT = re.compile(r"/\*LW_(CSS|JS)\*/|__LW_([A-Z]+)__")


def _static(name: str) -> str:
    return (files("lakewide.artifacts.docs") / "static" / name).read_text(encoding="utf-8")


def _embedded(document: dict[str, Any]) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>`` can end it early)."""
    return json.dumps(document, separators=(",", ":"), default=str).replace("<", "\\u003c")


def render_index(documents: Documents) -> str:
    """The page: the template with the style, the script and both documents filled in."""
    slots = {
        "CSS": _static("docs.css"),
        "JS": _static("docs.js"),
        "MANIFEST": _embedded(documents.manifest),
        "CATALOG": _embedded(documents.catalog),
        "TITLE": html.escape(str(documents.manifest["metadata"]["project_name"])),
        "VERSION": html.escape(__version__),
    }
    # one pass: text put into a slot is never searched for slots again
    return _SLOT.sub(lambda m: slots[m.group(1) or m.group(2)], _static("index.html"))


def write_site(documents: Documents, folder: Path) -> Path:
    """Write index.html, manifest.json and catalog.json into ``folder``; return index.html."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, document in (
        ("manifest.json", documents.manifest),
        ("catalog.json", documents.catalog),
    ):
        (folder / name).write_text(json.dumps(document, indent=2, default=str), encoding="utf-8")
    index = folder / "index.html"
    index.write_text(render_index(documents), encoding="utf-8")
    return index

"""Code comments and docstrings that point at documentation point at pages that exist.

Every path of a page under ``docs/`` or ``benchmarks/`` named in ``lakewide/`` or ``tests/``
must be a file of the repository, and a ``#anchor`` after it must be the slug of one of that
file's headings (as mkdocs and GitHub make them). Sections of the README are no longer pointed at: the
README is short, its content lives in the docs site.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from tests.support.project_factory import REPO_ROOT

REFERENCE = re.compile(r"(?<![\w/.])((?:docs|benchmarks)/[\w./-]+?\.md)(#[\w-]+)?")
README_SECTION = re.compile(r"README(?:'s)?\s+\"")


def slug(heading: str) -> str:
    """A heading's anchor: mkdocs' toc slugify (GitHub's agrees on these headings)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    """The slugs of a markdown file's headings (fenced code left out)."""
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.+)", line)):
            found.add(slug(heading.group(1)))
    return found


def _sources() -> list[Path]:
    return sorted(p for top in ("lakewide", "tests") for p in (REPO_ROOT / top).rglob("*.py"))


def references() -> list[tuple[str, str, str]]:
    """(file:line, page, anchor or "") of every page named in lakewide/ and tests/."""
    found = []
    for source in _sources():
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for match in REFERENCE.finditer(line):
                where = f"{source.relative_to(REPO_ROOT)}:{number}"
                found.append((where, match.group(1), (match.group(2) or "").lstrip("#")))
    return found


def test_code_points_at_docs_pages_that_exist() -> None:
    found = references()
    assert len(found) >= 15, f"expected the code's pointers into docs/, found {found}"
    broken = []
    for where, page, anchor in found:
        path = REPO_ROOT / page
        if not path.is_file():
            broken.append(f"{where}: {page} does not exist")
        elif anchor and anchor not in anchors(path):
            broken.append(f"{where}: {page} has no heading #{anchor}")
    assert not broken, "\n".join(broken)


def test_code_points_at_no_readme_section() -> None:
    stale = [
        f"{source.relative_to(REPO_ROOT)}:{number}"
        for source in _sources()
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if README_SECTION.search(line) and source.name != "test_docs_links.py"
    ]
    assert not stale, f"point at a docs/ page instead of a README section: {stale}"

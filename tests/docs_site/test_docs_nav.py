"""The docs site's source follows its nav (mkdocs.yml): every page under ``docs/`` is in the nav
once, and a page of a nav section lives in that section's folder (``concepts/``, ``how-to/``,
...), one folder per section. Only the site's home (``index.md``, the first page of its section)
and pages the nav lists at its top level, outside any section, sit at the top of ``docs/``; no
Python lives there (generators of pages are in ``tools/``).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from tests.support.project_factory import REPO_ROOT

HOME = "index.md"


def _pages(entry: Any) -> list[str]:
    """The page paths of a nav entry (a page, a titled page or a section), in nav order."""
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, list):
        return [page for item in entry for page in _pages(item)]
    return [page for value in entry.values() for page in _pages(value)]


def misplaced(config: Path) -> list[str]:
    """What in ``config``'s docs folder does not follow its nav: one line per problem."""
    settings = yaml.load(config.read_text(encoding="utf-8"), Loader=yaml.Loader)
    docs = config.parent / settings.get("docs_dir", "docs")
    problems = []
    listed: list[str] = []
    folders: dict[str, str] = {}
    for entry in settings["nav"]:
        [(title, value)] = entry.items() if isinstance(entry, dict) else [(entry, entry)]
        pages = _pages(value)
        listed += pages
        if isinstance(value, str):
            if "/" in value:
                problems.append(f"{value}: a top-level nav page lives at the top of docs/")
            continue
        found = {str(PurePosixPath(page).parent) for page in pages if page != HOME}
        if len(found) != 1 or "." in found:
            problems.append(f"section {title!r} is not one folder of docs/: {sorted(found)}")
            continue
        [folder] = found
        if folder in folders:
            problems.append(f"sections {folders[folder]!r} and {title!r} share {folder}/")
        folders[folder] = title
    if HOME in listed and listed.index(HOME) != 0:
        problems.append(f"{HOME} (the site's home) is not the nav's first page")
    on_disk = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
    problems += [f"{page}: not in the nav" for page in on_disk if page not in listed]
    problems += [f"{page}: in the nav but not in docs/" for page in listed if page not in on_disk]
    problems += [f"{page}: in the nav twice" for page in set(listed) if listed.count(page) > 1]
    code = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.py"))
    problems += [f"{path}: Python in the site's source" for path in code]
    return problems


def test_every_page_of_docs_is_in_the_folder_of_its_nav_section() -> None:
    assert misplaced(REPO_ROOT / "mkdocs.yml") == []


def _site(root: Path, nav: str, pages: list[str]) -> Path:
    for page in pages:
        (root / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / page).write_text(f"# {page}\n", encoding="utf-8")
    (root / "mkdocs.yml").write_text(f"site_name: s\nnav:\n{nav}", encoding="utf-8")
    return root / "mkdocs.yml"


def test_a_loose_page_or_one_missing_from_the_nav_is_reported(tmp_path: Path) -> None:
    nav = (
        "  - Start:\n      - Home: index.md\n      - Install: start/install.md\n"
        "  - Concepts:\n      - Runs: concepts/runs.md\n      - Arrival: arrival.md\n"
        "  - Architecture: architecture.md\n"
    )
    pages = ["index.md", "start/install.md", "concepts/runs.md", "arrival.md", "architecture.md"]
    config = _site(tmp_path / "loose", nav, [*pages, "concepts/extra.md"])
    (tmp_path / "loose" / "docs" / "gen").mkdir()
    (tmp_path / "loose" / "docs" / "gen" / "reference.py").write_text("", encoding="utf-8")
    assert misplaced(config) == [
        "section 'Concepts' is not one folder of docs/: ['.', 'concepts']",
        "concepts/extra.md: not in the nav",
        "gen/reference.py: Python in the site's source",
    ]
    fixed = nav.replace("Arrival: arrival.md", "Arrival: concepts/arrival.md")
    pages[3] = "concepts/arrival.md"
    assert misplaced(_site(tmp_path / "fixed", fixed, pages)) == []

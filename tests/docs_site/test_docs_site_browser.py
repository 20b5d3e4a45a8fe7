"""The project's docs site (mkdocs.yml, docs/) as a reader sees it: built with
``mkdocs build --strict``, served on 127.0.0.1 and opened in headless Chromium; the navigation
shows every section of mkdocs.yml and one page of each section renders its title."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml

from tests.commands.test_docs_browser import _browser, _Dom
from tests.support.project_factory import REPO_ROOT


def _nav() -> list[dict[str, Any]]:
    """mkdocs.yml's nav: one ``{section: pages or page}`` entry per section."""
    config = yaml.load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.Loader)
    nav: list[dict[str, Any]] = config["nav"]
    return nav


def _first_page(entry: str | list[dict[str, str]]) -> str:
    return entry if isinstance(entry, str) else next(iter(entry[0].values()))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site built by mkdocs (strict) and served over HTTP on loopback: its base URL."""
    if importlib.util.find_spec("mkdocs") is None:
        message = "mkdocs is not installed (pip install -e '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(message + "; CI must run this test")
        pytest.skip(message)
    site = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _dom(url: str) -> _Dom:
    command = [_browser(), "--headless", "--disable-gpu", "--no-first-run", "--dump-dom"]
    if os.geteuid() == 0:
        command.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    done = subprocess.run([*command, url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Dom()
    dom.feed(done.stdout)
    return dom


def _text(element: dict[str, Any]) -> str:
    return " ".join("".join(element["text"]).split())


def _page_url(base: str, page: str) -> str:
    """The URL mkdocs gives a page (directory URLs: ``concepts/x.md`` -> ``concepts/x/``)."""
    stem = page.removesuffix(".md")
    return base if stem == "index" else f"{base}{stem.removesuffix('/index')}/"


def _title(page: str) -> str:
    """The page's own title: its first ``# `` heading."""
    text = (REPO_ROOT / "docs" / page).read_text(encoding="utf-8")
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


@pytest.mark.parametrize("section", [next(iter(entry)) for entry in _nav()])
def test_each_section_is_in_the_navigation_and_a_page_of_it_renders(
    served: str, section: str
) -> None:
    [entry] = [e[section] for e in _nav() if section in e]
    page = _first_page(entry)
    dom = _dom(_page_url(served, page))
    tabs = {_text(a) for a in dom.find("a") if _Dom.inside(a, "nav", **{"class": "md-tabs"})}
    sections = {next(iter(e)) for e in _nav()}
    assert sections <= tabs, f"the navigation lacks {sorted(sections - tabs)}"
    headings = [_text(h) for h in dom.find("h1") if _Dom.inside(h, "article")]
    assert headings and headings[0].startswith(_title(page)), (page, headings)

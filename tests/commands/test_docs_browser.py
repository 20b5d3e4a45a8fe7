"""The docs site as a real browser renders it: headless Chromium opens target/docs/index.html
from file:// (offline), runs its script, and the DOM after that shows the DAG and the lineage."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from sqlglot import exp

from lakewide.cli import cli
from lakewide.compiler import analyze
from lakewide.compiler.trees.rewrite import driving_table
from tests.support.project_factory import copy_example_project, manifest_of

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)


def _browser() -> str:
    if CHROMIUM is None:
        message = "headless Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message + "; CI must run this test")
        pytest.skip(message)
    return CHROMIUM


def _chromium(page: Path, fragment: str, *args: str) -> str:
    command = [_browser(), "--headless", "--disable-gpu", "--no-first-run"]
    if os.geteuid() == 0:
        command.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    url = page.resolve().as_uri() + fragment
    done = subprocess.run(
        [*command, "--window-size=1400,1800", *args, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class _Dom(HTMLParser):
    """The elements of a dumped DOM as (tag, attributes, text inside) with their ancestors."""

    VOID = {"meta", "link", "input", "br", "img", "hr", "path", "rect", "stop"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.elements: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "attrs": {k: v or "" for k, v in attrs}, "text": [], "path": []}
        element["path"] = [e for e in self.stack]  # ancestors, outermost first
        self.elements.append(element)
        if tag not in self.VOID:
            self.stack.append(element)  # type: ignore[arg-type]

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index]["tag"] == tag:  # type: ignore[index]
                del self.stack[index:]
                break

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element["text"].append(data)  # type: ignore[index]

    def find(self, tag: str, **attrs: str) -> list[dict]:
        return [
            e
            for e in self.elements
            if e["tag"] == tag and all(e["attrs"].get(k) == v for k, v in attrs.items())
        ]

    @staticmethod
    def inside(element: dict, tag: str, **attrs: str) -> bool:
        """Whether an ancestor is a ``tag`` whose attributes hold these values (classes: one
        of the space-separated names)."""
        return any(
            a["tag"] == tag and all(v in a["attrs"].get(k, "").split() for k, v in attrs.items())
            for a in element["path"]
        )


def _dom(page: Path, fragment: str) -> _Dom:
    dom = _Dom()
    dom.feed(_chromium(page, fragment, "--dump-dom"))
    return dom


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    example = copy_example_project(tmp_path_factory.mktemp("docs") / "example")
    result = CliRunner().invoke(cli, ["--project-dir", str(example), "docs", "generate"])
    assert result.exit_code == 0, result.output
    return example


def _source_labels(example: Path) -> dict[str, str]:
    """relation key -> ``source.table`` as the page names a source."""
    manifest = manifest_of(example)
    return {s.relation.key: f"{name}.{table}" for (name, table), s in manifest.sources.items()}


def test_the_dag_shows_every_model_and_source(site: Path) -> None:
    dom = _dom(site / "target" / "docs" / "index.html", "")
    assert dom.find("body", **{"data-ready": "true"}), "the page's script did not finish"
    manifest = manifest_of(site)
    names = {
        "".join(t["text"]).strip()
        for t in dom.find("text", **{"class": "name"})
        if _Dom.inside(t, "g", **{"class": "node"}) and _Dom.inside(t, "svg", id="dag")
    }
    expected_models = set(manifest.models)
    expected_sources = {f"{n}.{t}" for n, t in manifest.sources}
    assert {n for n in names if n in expected_models} == expected_models
    assert {n for n in names if n in expected_sources} == expected_sources
    edges = [p for p in dom.find("path") if "edge" in p["attrs"].get("class", "").split()]
    expected_edges = sum(len(n.refs) + len(n.sources) for n in manifest.models.values())
    assert len(edges) == expected_edges


def test_imp_cnt_of_user_rec_wide_comes_from_ods_impressions(site: Path) -> None:
    page = site / "target" / "docs" / "index.html"
    dom = _dom(page, "#model/user_rec_wide")
    assert [h["attrs"]["data-unique-id"] for h in dom.find("h1", id="title")] == [
        "model.lakewide.user_rec_wide"
    ]
    # the oracle: the branch that owns imp_cnt (not CAST(NULL)) and the column it projects
    node = manifest_of(site).models["user_rec_wide"]
    labels = _source_labels(site)
    expected = []
    for branch in analyze(node).branches:
        if "imp_cnt" in branch.owned:
            table = labels[driving_table(branch.select) or ""]
            expected += [f"{table}.{c.name}" for c in branch.owned["imp_cnt"].find_all(exp.Column)]
    assert expected == ["ods.impressions.imp_cnt"]
    row = dom.find("tr", **{"data-column": "imp_cnt"})
    assert row, "no imp_cnt row in the columns table"
    shown = [
        e["attrs"]["data-ref"]
        for e in dom.elements
        if e["tag"] == "span"
        and "data-ref" in e["attrs"]
        and row[0] in e["path"]
        and _Dom.inside(e, "td", **{"class": "lineage"})
    ]
    assert shown == expected
    # the type cell says what catalog.json says, with where the type comes from
    catalog = json.loads((site / "target" / "docs" / "catalog.json").read_text())
    typed = catalog["nodes"]["model.lakewide.user_rec_wide"]["columns"]["imp_cnt"]
    cells = [e for e in dom.find("td") if row[0] in e["path"]]
    assert "".join(cells[1]["text"]) == (typed["type"] or "") + typed["type_origin"]


def test_through_a_ref_the_page_shows_the_source_and_the_model_between(site: Path) -> None:
    dom = _dom(site / "target" / "docs" / "index.html", "#model/order_status_counts")
    row = dom.find("tr", **{"data-column": "order_status"})[0]
    refs = [
        e["attrs"]["data-ref"]
        for e in dom.elements
        if e["tag"] == "span" and "data-ref" in e["attrs"] and row in e["path"]
    ]
    assert refs == ["ods.order_info.order_status", "order_detail.order_status"]


def test_screenshot_renders(site: Path, tmp_path: Path) -> None:
    shot = tmp_path / "docs.png"
    _chromium(
        site / "target" / "docs" / "index.html", "#model/user_rec_wide", f"--screenshot={shot}"
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_a_picked_column_lights_its_sources_in_the_dag(site: Path) -> None:
    dom = _dom(site / "target" / "docs" / "index.html", "#model/order_status_counts/order_status")
    lit = {
        g["attrs"]["data-id"]
        for g in dom.find("g")
        if "lit" in g["attrs"].get("class", "").split() and _Dom.inside(g, "svg", id="dag")
    }
    assert lit == {"source.lakewide.ods.order_info", "model.lakewide.order_detail"}
    picked = [t for t in dom.find("tr") if "picked" in t["attrs"].get("class", "").split()]
    assert [t["attrs"]["data-column"] for t in picked] == ["order_status"]


def test_the_page_shows_the_yaml_description_column_descriptions_and_tests(site: Path) -> None:
    dom = _dom(site / "target" / "docs" / "index.html", "#model/user_rec_wide")
    entry = next(
        m
        for m in yaml.safe_load((site / "models" / "wide" / "wide.yml").read_text())["models"]
        if m["name"] == "user_rec_wide"
    )
    shown = [" ".join("".join(p["text"]).split()) for p in dom.find("p", **{"class": "desc"})]
    assert shown == [entry["description"]]
    for column in entry["columns"]:
        row = dom.find("tr", **{"data-column": column["name"]})[0]
        cells = [e for e in dom.find("td") if row in e["path"]]
        assert "".join(cells[-1]["text"]) == column["description"]
    tests = {
        tuple("".join(c["text"]) for c in dom.find("td") if row in c["path"])
        for row in dom.find("tr")
        if _Dom.inside(row, "table") and len([c for c in dom.find("td") if row in c["path"]]) == 3
    }
    declared = {
        (column["name"], "error")
        for column in entry["columns"]
        for _ in column.get("data_tests", [])
    }
    assert declared <= {(column, severity) for _, column, severity in tests}
    assert "No data tests." not in "".join("".join(p["text"]) for p in dom.find("p"))

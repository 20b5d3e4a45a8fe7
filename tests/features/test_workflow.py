"""The run workflow without a JVM: the scheduler, clean, manifest.json, JSON output of errors."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from lakewide.run.models.scheduler import schedule
from tests.support.project_factory import copy_example_project, make_project, run_main


@dataclass
class Done:
    name: str
    status: str
    message: str = ""


# a ─┬─ c ── e        b ── d        f
#    └──────── e (e reads a and c)
UPSTREAM = {"a": [], "b": [], "c": ["a"], "d": ["b"], "e": ["a", "c"], "f": []}
ORDER = ["a", "b", "c", "d", "e", "f"]


def run_dag(threads: int, failing: set[str], fail_fast: bool = False) -> tuple[dict, list]:
    """Schedule UPSTREAM with workers that sleep a little; record (start, end) per node."""
    spans: dict[str, tuple[float, float]] = {}
    seen: list[str] = []
    lock = threading.Lock()

    def work(name: str) -> Done:
        start = time.perf_counter()
        time.sleep(0.05)
        with lock:
            spans[name] = (start, time.perf_counter())
        return Done(name, "error" if name in failing else "success")

    results = schedule(
        ORDER,
        UPSTREAM,
        work,
        lambda name, why: Done(name, "skipped", why),
        lambda r: seen.append(r.name),
        threads=threads,
        fail_fast=fail_fast,
    )
    return {n: (r.status, r.message, spans.get(n)) for n, r in results.items()}, seen


@pytest.mark.parametrize("threads", [1, 3])
def test_scheduler_runs_upstream_first(threads: int) -> None:
    outcome, seen = run_dag(threads, set())
    assert sorted(seen) == ORDER and all(s == "success" for s, _, _ in outcome.values())
    for name, parents in UPSTREAM.items():
        for parent in parents:  # a node starts only after each upstream node ended
            assert outcome[parent][2][1] <= outcome[name][2][0], (parent, name)
    if threads == 1:
        assert seen == ORDER


def test_scheduler_runs_independent_nodes_at_once() -> None:
    outcome, _ = run_dag(3, set())
    spans = {n: span for n, (_, _, span) in outcome.items()}
    overlapping = [
        (x, y)
        for x in spans
        for y in spans
        if x < y and spans[x][0] < spans[y][1] and spans[y][0] < spans[x][1]
    ]
    assert overlapping, spans
    for x, y in overlapping:  # never two nodes with a ref path between them
        assert x not in UPSTREAM[y] and y not in UPSTREAM[x]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failure_skips_downstream_only(threads: int) -> None:
    outcome, _ = run_dag(threads, {"a"})
    status = {n: s for n, (s, _, _) in outcome.items()}
    assert status == {
        "a": "error",
        "b": "success",
        "c": "skipped",
        "d": "success",
        "e": "skipped",
        "f": "success",
    }
    assert outcome["c"][1] == "upstream a failed" and outcome["c"][2] is None


@pytest.mark.parametrize("threads", [1, 2])
def test_a_skip_names_its_root_cause(threads: int) -> None:
    """A node whose ``done`` gives a reason (its test failed) skips its downstream nodes with
    that reason, passed on through nodes skipped in turn; so does a failed node's."""

    def work(name: str) -> Done:
        return Done(name, "error" if name == "b" else "success")

    def done(result: Done) -> str | None:
        return "test t failed on upstream a" if result.name == "a" else None

    results = schedule(
        ORDER,
        UPSTREAM,
        work,
        lambda name, why: Done(name, "skipped", why),
        done,
        threads=threads,
    )
    outcome = {n: (r.status, r.message) for n, r in results.items()}
    assert outcome == {
        "a": ("success", ""),
        "b": ("error", ""),
        "c": ("skipped", "test t failed on upstream a"),
        "d": ("skipped", "upstream b failed"),
        "e": ("skipped", "test t failed on upstream a"),  # through c, skipped as well
        "f": ("success", ""),
    }


def test_fail_fast_skips_everything_not_started() -> None:
    outcome, seen = run_dag(1, {"a"}, fail_fast=True)
    assert {n: s for n, (s, _, _) in outcome.items()} == {
        "a": "error",
        **{n: "skipped" for n in ORDER[1:]},
    }
    assert outcome["b"][1] == "--fail-fast: a failed" and seen == ORDER


# ---------------------------------------------------------------- clean


def test_clean_removes_target_and_keeps_the_warehouse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = make_project(tmp_path / "p", {"models/m.sql": "SELECT 1 AS id"})
    (project / "target" / "compiled").mkdir(parents=True)
    (project / "warehouse" / "analytics").mkdir(parents=True)
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(project), "clean")
    assert code == 0, out
    assert not (project / "target").exists() and (project / "warehouse" / "analytics").is_dir()
    assert "removed target/" in out
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(project), "clean")
    assert code == 0 and "nothing to remove: target" in out


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        ('["target", ".."]', "'..' is not a folder inside the project"),
        ('["."]', "is not a folder inside the project"),
        ('["data"]', "'data' holds the warehouse"),
    ],
)
def test_clean_refuses_what_it_must_not_remove(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    targets: str,
    message: str,
) -> None:
    pyproject = f'[project]\nname = "demo"\n\n[tool.lakewide]\nclean-targets = {targets}\n'
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        "      warehouse: data/warehouse\n"
    )
    project = make_project(tmp_path / "p", {"pyproject.toml": pyproject, "profiles.yml": profiles})
    (project / "target").mkdir()
    (project / "data" / "warehouse").mkdir(parents=True)
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(project), "clean")
    assert code == 2 and message in out and "tool.lakewide.clean-targets" in out
    assert (project / "target").is_dir() and (project / "data" / "warehouse").is_dir()


def test_clean_removes_the_warehouse_when_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = (
        '[project]\nname = "demo"\n\n[tool.lakewide]\n'
        'profile = "demo"\nclean-targets = ["target", "warehouse"]\n'
    )
    project = make_project(tmp_path / "p", {"pyproject.toml": pyproject})
    (project / "warehouse" / "analytics").mkdir(parents=True)
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(project), "clean")
    assert code == 0 and not (project / "warehouse").exists(), out


# ---------------------------------------------------------------- manifest.json


def test_every_parsing_command_writes_manifest_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_example_project(tmp_path / "example")
    path = project / "target" / "manifest.json"
    code, _ = run_main(monkeypatch, capsys, "--project-dir", str(project), "ls")
    assert code == 0
    document = json.loads(path.read_text())
    nodes = document["nodes"]
    names = {p.stem for p in (project / "models").rglob("*.sql")}
    assert {n["name"] for n in nodes.values() if n["resource_type"] == "model"} == names
    seeds = {p.stem for p in (project / "seeds").glob("*.csv")}
    assert {n["name"] for n in nodes.values() if n["resource_type"] == "seed"} == seeds
    counts = nodes["model.lakewide.order_status_counts"]
    assert counts["refs"] == [{"name": "order_detail"}]
    assert counts["depends_on"]["nodes"] == ["model.lakewide.order_detail"]
    wide = nodes["model.lakewide.user_rec_wide"]
    assert wide["config"]["primary_key"] == ["user_id", "item_id"]
    assert wide["materialized"] == "primary_key"
    assert sorted(wide["depends_on"]["nodes"]) == [
        f"source.lakewide.ods.{t}" for t in ("clicks", "impressions", "recommendations")
    ]
    assert "model.lakewide.user_rec_wide" in document["child_map"]["source.lakewide.ods.clicks"]
    before = wide["compiled_checksum"]["checksum"]

    model = project / "models" / "wide" / "user_rec_wide.sql"
    model.write_text(model.read_text().replace("imp_cnt", "imp_cnt ", 1) + "\n")
    path.unlink()
    code, _ = run_main(monkeypatch, capsys, "--project-dir", str(project), "compile")
    assert code == 0
    after = json.loads(path.read_text())["nodes"]["model.lakewide.user_rec_wide"]
    assert after["checksum"] != wide["checksum"]  # the file changed
    assert after["compiled_checksum"]["checksum"] == before  # whitespace: same statements

    model.write_text(model.read_text().replace("imp_cnt", "imp_cnt + 1", 1))
    run_main(monkeypatch, capsys, "--project-dir", str(project), "ls")
    changed = json.loads(path.read_text())["nodes"]["model.lakewide.user_rec_wide"]
    assert (
        changed["compiled_checksum"] is None or changed["compiled_checksum"]["checksum"] != before
    )


def test_json_format_errors_are_json_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_example_project(tmp_path / "example")
    code, out = run_main(
        monkeypatch, capsys, "--project-dir", str(project), "--log-format", "json", "ls"
    )
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert {line["info"]["name"] for line in lines} == {"Note"}
    assert any("user_rec_wide" in line["info"]["msg"] for line in lines)
    code, out = run_main(
        monkeypatch, capsys, "--project-dir", str(project), "--log-format", "json", "show", "nope"
    )
    assert code == 2
    [error] = [json.loads(line) for line in out.splitlines()]
    assert error["info"]["level"] == "error" and "no model named 'nope'" in error["info"]["msg"]
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(project), "ls")
    assert not out.startswith("{")  # the next invocation speaks text again


# ---------------------------------------------------------------- diff's sides


@pytest.mark.parametrize(
    ("targets", "snapshots", "expected"),
    [
        (("a", "b"), (), [("a", None), ("b", None)]),
        (("b",), (), [("dev", None), ("b", None)]),
        ((), ("1", "tag2"), [("dev", "1"), ("dev", "tag2")]),
        (("a",), ("7",), [("a", "7"), ("a", None)]),
        (("a", "b"), ("1", "2"), [("a", "1"), ("b", "2")]),
    ],
)
def test_diff_sides(targets: tuple, snapshots: tuple, expected: list) -> None:
    from lakewide.commands.diff import sides

    assert [(s.target, s.snapshot) for s in sides(targets, snapshots, "dev")] == expected


@pytest.mark.parametrize(
    ("targets", "snapshots"), [((), ()), (("a", "b", "c"), ()), (("a", "b"), ("1",))]
)
def test_diff_refuses_other_sides(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    targets: tuple,
    snapshots: tuple,
) -> None:
    project = copy_example_project(tmp_path / "example")
    args = [f"--target={t}" for t in targets] + [f"--snapshot={s}" for s in snapshots]
    code, out = run_main(
        monkeypatch, capsys, "--project-dir", str(project), "diff", "user_rec_wide", *args
    )
    assert code == 2 and "diff compares two sides" in out, out

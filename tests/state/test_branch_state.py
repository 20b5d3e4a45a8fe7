"""Environments on branches without a JVM: where a branch stands against main, what a run on a
branch sees, and the bad inputs refused before Spark starts (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.state.branches import branch_state, made_at_main, on_branch
from lakewide.state.offsets import Snapshot, TableMeta
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import DEFAULT_PROFILES, make_project, manifest_of, run_main


def _meta(**branches: int) -> TableMeta:
    """Snapshots 1 <- 2 <- 3 on one line, 4 on another from 1."""
    parents = {1: None, 2: 1, 3: 2, 4: 1}
    snapshots = {s: Snapshot(s, p, "append") for s, p in parents.items()}
    return TableMeta(branches.get("main"), snapshots, branches=dict(branches))


def test_branch_state_counts_the_snapshots_ahead_of_main() -> None:
    state = branch_state(_meta(main=1, dev=3), "dev")
    assert (state.head, state.main, state.ahead, state.forwardable) == (3, 1, 2, True)
    assert branch_state(_meta(main=3, dev=3), "dev").ahead == 0  # published already
    behind = branch_state(_meta(main=3, dev=2), "dev")  # production ran on since the publish
    assert (behind.ahead, behind.forwardable) == (0, True)


def test_branch_state_main_moved_elsewhere_cannot_be_forwarded() -> None:
    assert not branch_state(_meta(main=4, dev=3), "dev").forwardable
    assert branch_state(_meta(main=4), "dev").head is None


def test_a_run_starts_the_branch_at_mains_head_where_it_is_missing_or_behind() -> None:
    """Where the run makes the branch, or moves it to main's head, the branch's contract keys
    are stale (the pre-run schema check then plans from main's contract)."""
    assert made_at_main(_meta(main=3), "dev")  # missing: made at main's head
    assert made_at_main(_meta(main=3, dev=2), "dev")  # behind main: moved
    assert not made_at_main(_meta(main=3, dev=3), "dev")  # at main's head already
    assert not made_at_main(_meta(main=1, dev=3), "dev")  # ahead: continued
    assert not made_at_main(_meta(main=4, dev=3), "dev")  # diverged: continued
    assert not made_at_main(_meta(main=3, dev=2), None)  # a run on main
    assert not made_at_main(None, "dev")  # no table


def test_on_branch_shows_the_branch_head_where_the_table_has_it() -> None:
    meta = _meta(main=1, dev=3)
    assert on_branch(meta, "dev").current == 3  # type: ignore[union-attr]
    assert on_branch(meta, "other").current == 1  # type: ignore[union-attr]
    assert on_branch(meta, None) is meta
    # offsets, definitions and contracts are read from the current snapshot's ancestors
    assert [s.id for s in on_branch(meta, "dev").ancestors()] == [3, 2, 1]  # type: ignore[union-attr]


def test_profile_branch_main_is_refused_naming_the_key(tmp_path: Path) -> None:
    profiles = DEFAULT_PROFILES + "      branch: main\n"
    project = make_project(tmp_path, {"profiles.yml": profiles, "models/m.sql": "SELECT 1 AS x"})
    with pytest.raises(ConfigError) as err:
        manifest_of(project)
    assert "branch" in str(err.value) and "main is the production line" in str(err.value)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("run", "--branch", "main"), "main is the production line"),
        (("build", "--branch", "a.b"), "invalid branch name 'a.b'"),
        (("run", "--branch", "dev", "--full-refresh"), "--full-refresh replaces tables"),
        (("run", "--branch", "dev"), "table lw.analytics.m has no snapshot on main yet"),
        (("run", "--branch", "dev", "-s", "v"), "model v is a view"),
    ],
)
def test_bad_branch_runs_exit_2_before_spark(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    expected: str,
) -> None:
    files = {"models/m.sql": "SELECT 1 AS x", "models/v.sql": "{{ config(materialized='view') }}"}
    files["models/v.sql"] += "\nSELECT 1 AS x"
    project = make_project(tmp_path, files)
    monkeypatch.setenv("JAVA_HOME", "/nonexistent")  # Spark must not be needed to refuse
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(project), *args)
    assert code == 2, output
    assert expected in " ".join(output.split()), output


def _refused_before_spark(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    project: Path,
    args: tuple[str, ...],
    *expected: str,
) -> None:
    """``lakewide ARGS`` exits 2 saying each of ``expected``, without Spark, writing nothing."""
    monkeypatch.setenv("JAVA_HOME", "/nonexistent")  # refused before Spark
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(project), *args)
    flat = " ".join(output.split())
    assert code == 2, output
    assert all(text in flat for text in expected), output
    assert not (project / "target" / "run_results.json").exists()


_PROFILE_CASES = [  # a bad profile ``branch:`` key through every command that loads it
    (f"      branch: {value}\n", command, (expected, "profiles.yml", "branch"))
    for value, expected in (("main", "main is the production line"), ("'a.b'", "'a.b'"))
    for command in (
        ("run",),
        ("build",),
        ("compile",),
        ("ls",),
        ("test",),
        ("docs", "generate"),
        ("publish",),
    )
]
_OPTION_CASES = [  # a bad ``--branch NAME`` / ``branch drop NAME`` through every command
    ("", (*command, value), (expected,))
    for value, expected in (
        ("main", "main is the production line"),
        ("dev-1", "invalid branch name 'dev-1'"),
        ("dev__lw_stage", "staging side branches"),  # lakewide.run.models.branch_stage's
    )
    for command in (
        ("run", "--branch"),
        ("build", "--branch"),
        ("test", "--branch"),
        ("publish", "--branch"),
        ("branch", "drop"),
    )
]


@pytest.mark.parametrize(
    ("profile_extra", "args", "expected"),
    _PROFILE_CASES + _OPTION_CASES,
    ids=lambda case: case.strip() if isinstance(case, str) else "-".join(case),
)
def test_bad_branch_exits_2_through_every_command(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    profile_extra: str,
    args: tuple[str, ...],
    expected: tuple[str, ...],
) -> None:
    files = {"profiles.yml": DEFAULT_PROFILES + profile_extra, "models/m.sql": "SELECT 1 AS x"}
    project = make_project(tmp_path, files)
    _refused_before_spark(monkeypatch, capsys, project, args, *expected)

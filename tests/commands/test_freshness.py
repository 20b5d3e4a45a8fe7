"""Freshness targets without a JVM: durations, the config key, which snapshots a model has not
consumed, what a watch poll refreshes, and the command's errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakewide.project.config.model_config import parse_model_config
from lakewide.project.durations import describe, parse_duration
from lakewide.run.maintenance.watch import is_due, plan_refresh
from lakewide.state.definition import definition_digest
from lakewide.state.lag import BEHIND, FRESH, NOT_BUILT, ModelLag, first_unconsumed
from lakewide.state.offsets import Snapshot, TableMeta
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project, manifest_of, run_main


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30 seconds", 30),
        ("1 second", 1),
        ("5 minutes", 300),
        ("5 MINUTES", 300),
        ("1 minute", 60),
        ("1 hour", 3600),
        ("1.5 hours", 5400),
        ("2 days", 172800),
        ("90s", 90),
        ("5min", 300),
        (" 2 h ", 7200),
        ("1 d", 86400),
        ("INTERVAL '5' MINUTE", 300),  # Flink's FRESHNESS
        ("interval 30 second", 30),
        ({"count": 12, "period": "hour"}, 43200),  # dbt's freshness mapping
    ],
)
def test_durations_as_users_write_them(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("5", "expected a number and a unit"),
        (5, "a string, not int"),
        ("5 fortnights", "unknown unit 'fortnights'"),
        ("0 seconds", "more than zero"),
        ("-1 minute", "expected a number and a unit"),
        ("five minutes", "expected a number and a unit"),
        ({"count": 1}, "dbt's mapping"),
        (True, "a string, not bool"),
    ],
)
def test_bad_freshness_names_file_key_and_the_accepted_forms(value: object, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_config({"freshness": value}, path="models/m.sql", line=2, model="m")
    text = str(info.value)
    assert text.startswith("models/m.sql:2: [freshness] invalid value ")
    assert says in text


def test_freshness_is_kept_as_written_and_allowed_on_tables_and_key_tables() -> None:
    table = parse_model_config({"freshness": " 5 minutes"}, path="m.sql")
    assert table.freshness == "5 minutes"
    keyed = parse_model_config(
        {
            "merge_engine": "deduplicate",
            "primary_key": "k",
            "freshness": {"count": 1, "period": "day"},
        },
        path="m.sql",
    )
    assert keyed.freshness == "1 day"


def test_describe() -> None:
    assert [describe(s) for s in (0.25, 3, 59, 60, 90, 3600, 5400, 90000)] == [
        "0.2s",
        "3s",
        "59s",
        "1m",
        "1m 30s",
        "1h",
        "1h 30m",
        "1d 1h",
    ]


MODELS = {
    "models/sources.yml": "sources:\n  - name: src\n    schema: raw\n    tables:\n"
    "      - name: a\n      - name: b\n",
    "models/m.sql": "{{ config(merge_engine='deduplicate', primary_key='k') }}\n"
    "SELECT k, v FROM {{ source('src', 'a') }}\n",
    "models/mid.sql": "SELECT k, v FROM {{ ref('m') }}\n",
    "models/top.sql": "{{ config(freshness='10 seconds') }}\nSELECT k FROM {{ ref('mid') }}\n",
    "models/other.sql": "SELECT k FROM {{ source('src', 'b') }}\n",
}


def test_a_freshness_target_does_not_change_the_definition(tmp_path: Path) -> None:
    before = manifest_of(make_project(tmp_path / "a", MODELS))
    edited = {
        **MODELS,
        "models/m.sql": MODELS["models/m.sql"].replace(
            "primary_key='k'", "primary_key='k', freshness='1 hour'"
        ),
    }
    after = manifest_of(make_project(tmp_path / "b", edited))
    assert after.models["m"].config.freshness == "1 hour"
    assert definition_digest(after.models["m"]) == definition_digest(before.models["m"])


def _meta(*snapshots: tuple[int, str, int]) -> TableMeta:
    """A line of snapshots (id, operation, commit ms), oldest first, each the next's parent."""
    found, parent = {}, None
    for snapshot_id, operation, ms in snapshots:
        found[snapshot_id] = Snapshot(snapshot_id, parent, operation, {}, ms)
        parent = snapshot_id
    return TableMeta(parent, found)


def test_first_unconsumed_is_the_oldest_data_change_after_the_consumed_snapshot() -> None:
    meta = _meta((1, "append", 100), (2, "append", 200), (3, "replace", 300), (4, "append", 400))
    assert first_unconsumed(meta, 4) is None
    assert first_unconsumed(meta, 1).id == 2  # type: ignore[union-attr]
    assert first_unconsumed(meta, 2).id == 4  # type: ignore[union-attr]  # compaction: no data
    assert first_unconsumed(meta, None).id == 1  # type: ignore[union-attr]  # never consumed
    assert first_unconsumed(meta, 99).id == 1  # type: ignore[union-attr]  # not an ancestor
    only_compaction = _meta((1, "append", 100), (2, "replace", 200))
    assert first_unconsumed(only_compaction, 1) is None


def lag(name: str, state: str, seconds: float | None, target: float | None, own: bool) -> ModelLag:
    return ModelLag(name, state, seconds, target, own)


def test_due_when_the_next_poll_could_pass_the_target() -> None:
    assert not is_due(lag("x", BEHIND, 5.0, None, True), 1.0)  # no target
    assert not is_due(lag("x", FRESH, 0.0, 10.0, False), 30.0)  # nothing new
    assert not is_due(lag("x", BEHIND, 5.0, 10.0, True), 1.0)  # 6s < 10s: waits
    assert is_due(lag("x", BEHIND, 9.0, 10.0, True), 1.0)
    assert is_due(lag("x", BEHIND, 12.0, 10.0, True), 1.0)
    assert is_due(lag("x", NOT_BUILT, None, 10.0, True), 1.0)


def test_a_poll_refreshes_the_due_models_and_what_they_need_upstream(tmp_path: Path) -> None:
    manifest = manifest_of(make_project(tmp_path, MODELS))
    names = ["m", "mid", "other", "top"]
    assert [n for n in names if n in manifest.models] == names
    lags = {
        "m": lag("m", BEHIND, 20.0, None, True),
        "mid": lag("mid", BEHIND, 20.0, None, False),
        "other": lag("other", BEHIND, 50.0, None, True),  # no target, nobody needs it
        "top": lag("top", BEHIND, 20.0, 10.0, False),
    }
    plan = plan_refresh(manifest, names, lags, 1.0)
    assert plan.names == ["m", "mid", "top"]
    assert plan.reasons == {
        "m": "upstream of mid",
        "mid": "upstream of top",
        "top": "lag 20s over target 10s",
    }
    # m not selected: mid and top have nothing new to read until m runs
    plan = plan_refresh(manifest, ["mid", "top"], lags, 1.0)
    assert plan.names == []
    # within the target: nothing runs although upstream tables changed
    calm = {**lags, "top": lag("top", BEHIND, 2.0, 10.0, False)}
    assert plan_refresh(manifest, names, calm, 1.0).names == []


def test_freshness_of_models_never_built_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = make_project(tmp_path, MODELS)
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(project), "--log-format", "json", "freshness"
    )
    assert code == 1, output
    found = {
        e["data"]["node_info"]["node_name"]: (e["data"]["status"], e["data"]["state"])
        for e in map(json.loads, output.splitlines())
        if e["info"]["name"] == "LogFreshnessResult"
    }
    assert found == {
        "m": ("none", NOT_BUILT),
        "mid": ("none", NOT_BUILT),
        "other": ("none", NOT_BUILT),
        "top": ("error", NOT_BUILT),
    }
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(project), "freshness", "-s", "m"
    )
    assert code == 0 and "0 of 0 model(s) with a target" in output


REST = """\
demo:
  target: dev
  outputs:
    dev:
      catalog: lw
      catalog_type: rest
      uri: http://localhost:1
      namespace: analytics
"""
HIVE = REST.replace("catalog_type: rest", "catalog_type: hive").replace("http:", "thrift:")


@pytest.mark.parametrize(
    ("files", "args", "says"),
    [
        ({"profiles.yml": HIVE}, ["freshness"], "reads Iceberg metadata without Spark"),
        ({"profiles.yml": REST}, ["freshness"], "refused or did not answer"),
        ({}, ["run", "--watch", "-s", "m"], "none of the selected models (m) sets one"),
        ({}, ["run", "--interval", "5"], "--interval applies to --watch"),
        ({}, ["run", "--watch", "--threads", "2"], "drop --full-refresh and --threads"),
        ({}, ["run", "--watch", "--interval", "0"], "x>=0.1"),
    ],
)
def test_usage_errors_exit_2_before_spark(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    args: list[str],
    says: str,
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))  # a JVM start would fail
    project = make_project(tmp_path, {**MODELS, **files})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(project), *args)
    assert code == 2, output
    assert says in output

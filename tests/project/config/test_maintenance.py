"""``maintenance``/``retention``/``ttl`` config and ``maintain``'s planning from metadata (no JVM).

The protected snapshots and the expiry bound are checked against Iceberg's retention rule,
written out here as an oracle: an ancestor of the current snapshot survives while it is among
the ``retain_last`` newest or not older than ``older_than`` (the walk stops at the first that
is neither); any other snapshot survives when it is not older than ``older_than``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from lakewide.project.config.model_config import parse_model_config
from lakewide.project.durations import parse_age
from lakewide.run.maintenance.maintenance_steps import (
    expire_before,
    floor_to,
    plan_table,
    protected_snapshots,
)
from lakewide.state.definition import definition_digest
from lakewide.state.offsets import OFFSETS, Snapshot, TableColumn, TableMeta
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project, manifest_of

KEY = {"merge_engine": "deduplicate", "primary_key": ["k"]}


def _error(raw: dict[str, object]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_model_config(raw, path="models/m.sql", line=1)
    return str(caught.value)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"maintenance": {"expire_afer": "7 days"}}, "[maintenance.expire_afer] unknown key"),
        ({"maintenance": {"expire_after": "7 dayz"}}, "unknown unit 'dayz'"),
        ({"maintenance": {"retain_last": 0}}, "[maintenance.retain_last]"),
        ({"maintenance": {"orphan_after": "2 hours"}}, "shorter than 1 day"),
        ({"maintenance": "weekly"}, "[maintenance] maintenance expects a mapping"),
        ({"retention": {"column": "ts", "keep": "30 days"}}, "partition_by: none"),
        (
            {"retention": {"column": "ts", "keep": "3 days"}, "partition_by": ["bucket(4, ts)"]},
            "must be partitioned by hours(ts), days(ts) or months(ts)",
        ),
        (
            {"retention": {"column": "ts", "keep": "3 days"}, "partition_by": ["years(ts)"]},
            "[retention.column]",
        ),
        ({"ttl": {"column": "ts"}}, "[ttl.keep]"),
        ({"ttl": {"column": "ts", "kep": "1 day"}}, "Did you mean 'keep'?"),
    ],
)
def test_bad_maintenance_config_names_file_and_key(extra: dict[str, object], expected: str) -> None:
    message = _error({**KEY, **extra})
    assert message.startswith("models/m.sql:1: ")
    assert expected in message


def test_retention_and_ttl_need_a_key_table() -> None:
    for key in ("retention", "ttl"):
        message = _error({key: {"column": "ts", "keep": "1 day"}})
        assert f"[{key}] {key} applies to key tables" in message


def test_accepted_settings_and_durations() -> None:
    config = parse_model_config(
        {
            **KEY,
            "partition_by": ["hours(ts)"],
            "maintenance": {"expire_after": "2 weeks", "retain_last": 3, "orphan_after": None},
            "retention": {"column": "ts", "keep": "48 hours"},
        },
        path="m.sql",
    )
    assert config.maintenance.expire_age == timedelta(days=14)
    assert config.maintenance.orphan_age is None
    assert parse_age("1 Week") == timedelta(days=7)
    assert parse_age("90 seconds") == timedelta(seconds=90)
    assert parse_age("0 seconds") == timedelta(0)  # an age may be zero: expire all unneeded


def test_maintenance_keys_do_not_change_the_definition_digest(tmp_path: Path) -> None:
    sql = "SELECT k, ts FROM {{ source('s', 't') }}"
    digests = []
    for config in ("", ", maintenance={'retain_last': 9}, ttl={'column': 'ts', 'keep': '1 day'}"):
        root = make_project(
            tmp_path / str(len(digests)),
            {
                "models/sources.yml": "sources: [{name: s, schema: raw, tables: [{name: t}]}]\n",
                "models/m.sql": f"{{{{ config(merge_engine='deduplicate', primary_key='k'{config}) }}}}\n{sql}",
            },
        )
        digests.append(definition_digest(manifest_of(root).models["m"]))
    assert digests[0] == digests[1]


# ---------------------------------------------------------------- planning from metadata

NOW = datetime(2026, 3, 15, 12, 30, tzinfo=timezone.utc)


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _history(
    n: int, *, commits: dict[int, dict[str, int | None]] | None = None, start: datetime
) -> TableMeta:
    """Snapshots 1..n in a line, one hour apart; ``commits``: lakewide commits' offsets."""
    snapshots = {}
    for i in range(1, n + 1):
        summary = {}
        if commits and i in commits:
            summary[OFFSETS] = json.dumps(commits[i])
        snapshots[i] = Snapshot(
            i, i - 1 or None, "overwrite", summary, _ms(start + timedelta(hours=i))
        )
    columns = (TableColumn("k", "long"), TableColumn("ts", "timestamptz"))
    return TableMeta(n, snapshots, 2, columns)


def _survivors(meta: TableMeta, older_than: datetime, retain_last: int) -> set[int]:
    """Iceberg's retention rule (see the module doc), as an independent oracle."""
    bound, kept = _ms(older_than), set()
    for snapshot in meta.ancestors():
        if len(kept) < retain_last or snapshot.timestamp_ms >= bound:
            kept.add(snapshot.id)
        else:
            break
    ancestry = {s.id for s in meta.ancestors()}
    kept |= {
        s.id for s in meta.snapshots.values() if s.id not in ancestry and s.timestamp_ms >= bound
    }
    return kept


def _chain_project(tmp_path: Path) -> Path:
    return make_project(
        tmp_path,
        {
            "models/sources.yml": "sources: [{name: s, schema: raw, tables: [{name: t}]}]\n",
            "models/up.sql": "{{ config(merge_engine='deduplicate', primary_key='k', "
            "partition_by=['days(ts)'], retention={'column': 'ts', 'keep': '2 days'}, "
            "ttl={'column': 'ts', 'keep': '36 hours'}, "
            "maintenance={'expire_after': '1 hour', 'retain_last': 2}) }}\n"
            "SELECT k, ts FROM {{ source('s', 't') }}",
            "models/down.sql": "{{ config(merge_engine='deduplicate', primary_key='k') }}\n"
            "SELECT k, ts FROM {{ ref('up') }}",
        },
    )


def test_expiry_keeps_what_offsets_need_and_nothing_else(tmp_path: Path) -> None:
    manifest = manifest_of(_chain_project(tmp_path))
    up, down = manifest.models["up"], manifest.models["down"]
    start = NOW - timedelta(days=30)
    # up: 20 snapshots; its last lakewide commit is 15 (16..20 are compactions)
    up_meta = _history(20, commits={5: {"0:lw.raw.t": 1}, 15: {"0:lw.raw.t": 2}}, start=start)
    # down consumed up's snapshot 9
    down_meta = _history(3, commits={3: {"0:lw.analytics.up": 9}}, start=start)
    metas = {up.relation: up_meta, down.relation: down_meta}

    protected = protected_snapshots(manifest, up, up_meta, metas.get)
    assert set(protected) == set(range(9, 21))
    assert protected[9] == "consumed by down"
    assert protected[20] == "up's last commit (its offsets); consumed by down"
    older_than = expire_before(up_meta, protected, NOW, timedelta(hours=1))
    survivors = _survivors(up_meta, older_than, retain_last=2)
    assert set(protected) <= survivors
    assert survivors == set(range(9, 21))  # everything older than what is needed expires

    # nothing downstream: only the table's own last commit and after
    alone = protected_snapshots(manifest, up, up_meta, {up.relation: up_meta}.get)
    assert set(alone) == set(range(15, 21))
    # a consumed snapshot that is not on the current history protects nothing
    down_meta = _history(3, commits={3: {"0:lw.analytics.up": 999}}, start=start)
    assert set(protected_snapshots(manifest, up, up_meta, {down.relation: down_meta}.get)) == set(
        range(15, 21)
    )


def test_plan_builds_every_step_as_sql(tmp_path: Path) -> None:
    manifest = manifest_of(_chain_project(tmp_path))
    up = manifest.models["up"]
    meta = _history(4, commits={4: {"0:lw.raw.t": 1}}, start=NOW - timedelta(days=3))
    plan, protected = plan_table(manifest, "up", {up.relation: meta}.get, NOW)
    assert set(protected) == {4}
    texts = {step.kind: to_sql(step.statement, pretty=False) for step in plan.steps}
    assert list(texts) == [
        "retention",
        "ttl",
        "rewrite_data_files",
        "rewrite_position_delete_files",
        "rewrite_manifests",
        "expire_snapshots",
        "remove_orphan_files",
    ]
    # retention: now - 2 days, down to its UTC day; ttl: exactly now - 36 hours
    assert "`ts` < CAST('2026-03-13 00:00:00.000Z' AS TIMESTAMP)" in texts["retention"]
    assert "`ts` < CAST('2026-03-14 00:30:00.000Z' AS TIMESTAMP)" in texts["ttl"]
    assert texts["rewrite_data_files"] == (
        "CALL lw.system.rewrite_data_files(table => '`analytics`.`up`', strategy => 'binpack')"
    )
    # expire_after 1 hour, but snapshot 4 (2026-03-12 16:30) is needed: older_than moves back
    assert texts["expire_snapshots"] == (
        "CALL lw.system.expire_snapshots(table => '`analytics`.`up`', "
        "older_than => TIMESTAMP '2026-03-12 16:30:00.000Z', retain_last => 2)"
    )
    assert "older_than => TIMESTAMP '2026-03-12 12:30:00.000Z'" in texts["remove_orphan_files"]


def test_plan_refuses_a_ttl_column_that_is_not_a_time_column(tmp_path: Path) -> None:
    root = _chain_project(tmp_path)
    (root / "models" / "up.sql").write_text(
        "{{ config(merge_engine='deduplicate', primary_key='k', "
        "ttl={'column': 'k', 'keep': '1 day'}) }}\nSELECT k, ts FROM {{ source('s', 't') }}"
    )
    manifest = manifest_of(root)
    meta = _history(2, commits={2: {}}, start=NOW - timedelta(days=1))
    with pytest.raises(ConfigError, match=r"\[ttl.column\] ttl column 'k' has type long"):
        plan_table(manifest, "up", {manifest.models["up"].relation: meta}.get, NOW)


def test_views_and_unbuilt_tables_are_skipped(tmp_path: Path) -> None:
    manifest = manifest_of(_chain_project(tmp_path))
    plan, _ = plan_table(manifest, "down", lambda _: None, NOW)
    assert plan.skipped == "not built yet" and not plan.steps


def test_floor_to_partition_boundaries() -> None:
    at = datetime(2026, 3, 15, 12, 30, 45, tzinfo=timezone.utc)
    assert floor_to(at, "hour") == datetime(2026, 3, 15, 12, tzinfo=timezone.utc)
    assert floor_to(at, "day") == datetime(2026, 3, 15, tzinfo=timezone.utc)
    assert floor_to(at, "month") == datetime(2026, 3, 1, tzinfo=timezone.utc)

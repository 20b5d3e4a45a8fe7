"""Consistent versions without a JVM: tag names and retention, the lineage of a snapshot through
upstream models, the newest consistent pair and which models of a run carry its tag."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.project.durations import Retention, parse_retention
from lakewide.project.manifest import Manifest
from lakewide.state.consistency import Lineages, Pair, newest_pair, tags_of
from lakewide.state.offsets import Snapshot, TableMeta, commit_properties, offset_key
from lakewide.state.tags import (
    check_tag_name,
    consistent_set,
    create_tag,
    model_lineages,
)
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project, manifest_of

S = "lw.ods.s"  # a source
A, B, C = "lw.analytics.a", "lw.analytics.b", "lw.analytics.c"


@pytest.mark.parametrize("name", ["lw-run-0a1b", "release-1.0", "v2", "EOD_2024.01.31"])
def test_tag_names_accepted(name: str) -> None:
    assert check_tag_name(name) == name


@pytest.mark.parametrize("name", ["", "main", "a`b", "a b", "-x", ".x", "x" * 201, "tag;drop"])
def test_tag_names_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="letters, digits"):
        check_tag_name(name)


def test_a_statement_never_carries_a_refused_name() -> None:
    from lakewide.project.nodes import Relation

    with pytest.raises(ConfigError):
        create_tag(Relation("lw", "ns", "t"), "x` RETAIN 1 DAYS --", 1, Retention(), False)


@pytest.mark.parametrize(
    ("text", "amount", "unit"),
    [("7 days", 7, "DAYS"), ("1 hour", 1, "HOURS"), (" 30 Minutes ", 30, "MINUTES")],
)
def test_retention(text: str, amount: int, unit: str) -> None:
    assert parse_retention(text) == Retention(amount, unit)


def test_retention_counted_from_the_run() -> None:
    """Iceberg ages a tag from its snapshot's commit: an older snapshot gets the difference."""
    assert Retention(7, "DAYS").after(0) == Retention(7 * 24 * 60, "MINUTES")
    assert Retention(2, "HOURS").after(90_001) == Retention(120 + 2, "MINUTES")
    assert Retention(None).after(10**9) == Retention(None)


def test_retention_forever_and_refused() -> None:
    assert parse_retention("forever").amount is None
    for text in ("0 days", "7", "days", "-1 days", "3 fortnights"):
        with pytest.raises(ValueError, match="expected a number and a unit|unknown unit|more than"):
            parse_retention(text)
    with pytest.raises(ValueError, match="whole minutes"):
        parse_retention("90 seconds")


def test_retention_shares_the_duration_grammar() -> None:
    """The grammar of freshness and maintenance ages: weeks, short units, dbt's mapping."""
    assert parse_retention("2 weeks") == Retention(14, "DAYS")
    assert parse_retention("90min") == Retention(90, "MINUTES")
    assert parse_retention("1.5 hours") == Retention(90, "MINUTES")
    assert parse_retention({"count": 12, "period": "hour"}) == Retention(12, "HOURS")


def test_profile_retention_refused_with_its_key(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "profiles.yml": "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
            "      warehouse: wh\n      tag_retention: 2 fortnights\n",
            "models/m.sql": "SELECT 1 AS x",
        },
    )
    with pytest.raises(ConfigError, match="tag_retention") as err:
        manifest_of(root)
    assert "unknown unit 'fortnights'" in str(err.value)


class History:
    """Iceberg snapshots of a few tables, committed as lakewide commits them."""

    def __init__(self) -> None:
        self.metas: dict[str, TableMeta] = {}
        self.clock = 0

    def commit(
        self, table: str, snapshot: int, consumed: dict[str, int | None] | None, **tags: int
    ) -> Snapshot:
        """A commit of ``table`` that consumed ``consumed`` (None: a maintenance commit)."""
        self.clock += 1000
        old = self.metas.get(table, TableMeta(None, {}))
        summary = (
            {}
            if consumed is None
            else commit_properties({offset_key(0, r): s for r, s in consumed.items()}, "run", table)
        )
        snap = Snapshot(snapshot, old.current, "overwrite", summary, self.clock)
        self.metas[table] = TableMeta(
            snapshot, {**old.snapshots, snapshot: snap}, tags={**old.tags, **tags}
        )
        return snap

    def lineages(self) -> Lineages:
        return Lineages(self.metas.get)


def ids(pair: Pair | str) -> tuple[int, int]:
    assert isinstance(pair, Pair), pair
    return pair.a.id, pair.b.id


def test_newest_pair_through_upstream_models() -> None:
    h = History()
    h.commit(A, 11, {S: 1})
    h.commit(B, 21, {S: 1})
    h.commit(C, 31, {A: 11})  # C reads A: its lineage names S at 1 through A's snapshot 11
    h.commit(A, 12, {S: 2})
    assert ids(newest_pair(h.lineages(), A, B)) == (11, 21)
    assert ids(newest_pair(h.lineages(), A, C)) == (11, 31)
    assert ids(newest_pair(h.lineages(), B, C)) == (21, 31)
    h.commit(B, 22, {S: 2})
    assert ids(newest_pair(h.lineages(), A, B)) == (12, 22)
    assert ids(newest_pair(h.lineages(), B, C)) == (21, 31)  # C still reads S at 1 via A
    pair = newest_pair(h.lineages(), A, B)
    assert isinstance(pair, Pair) and pair.shared == (S,)


def test_a_maintenance_commit_keeps_the_lineage_and_carries_the_tag() -> None:
    h = History()
    h.commit(A, 11, {S: 1})
    h.commit(A, 12, None, **{"lw-run-1": 12})  # a compaction, then tagged
    h.commit(B, 21, {S: 1})
    assert ids(newest_pair(h.lineages(), A, B)) == (11, 21)
    assert tags_of(h.metas[A], 11) == ["lw-run-1"]
    assert tags_of(h.metas[A], 12) == []  # not a lakewide commit: never a pair's snapshot


def test_no_pair_says_why() -> None:
    h = History()
    h.commit(A, 11, {S: 1})
    h.commit(A, 12, {S: 2})
    h.commit(B, 21, {S: 3})
    why = newest_pair(h.lineages(), A, B)
    assert why == (
        f"{A}'s newest snapshot 12 consumed {S} at 2; {B} never consumed {S} at that "
        "snapshot (its snapshots consumed it at 3)"
    )
    assert newest_pair(h.lineages(), A, C) == f"{C} has no lakewide commits " + (
        "(never built, or its history was replaced)"
    )


MODELS = {
    "models/sources.yml": "sources:\n  - name: ods\n    tables:\n      - name: s\n",
    "models/a.sql": "{{ config(materialized='table') }}\nSELECT x FROM {{ source('ods', 's') }}",
    "models/b.sql": "{{ config(materialized='table') }}\nSELECT x FROM {{ source('ods', 's') }}",
    "models/c.sql": "{{ config(materialized='table') }}\nSELECT x FROM {{ ref('a') }}",
}


def project(tmp_path: Path) -> tuple[Manifest, dict[str, str]]:
    manifest = manifest_of(make_project(tmp_path, MODELS))
    return manifest, {n: m.relation.key for n, m in manifest.models.items()}


def test_run_set_leaves_out_failed_and_inconsistent_models(tmp_path: Path) -> None:
    manifest, key = project(tmp_path)
    source = manifest.sources[("ods", "s")].relation.key
    h = History()
    h.commit(key["a"], 11, {source: 2})
    h.commit(key["b"], 21, {source: 1})  # built by an earlier run from older rows
    h.commit(key["c"], 31, {key["a"]: 11})
    lineages = model_lineages(manifest, lambda r: h.metas.get(r.key))
    found = consistent_set(
        manifest, [("a", "success"), ("b", "success"), ("c", "success")], lineages
    )
    assert found.tagged == {"a": 11, "c": 31}
    assert f"built from {source} at 1, the models tagged before it from 2" in found.left["b"]
    found = consistent_set(manifest, [("a", "error"), ("b", "success"), ("c", "skipped")], lineages)
    assert found.tagged == {"b": 21}
    assert found.left["a"].startswith("error in this run")
    assert found.left["c"].startswith("skipped in this run")

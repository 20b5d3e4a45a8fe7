"""Per-run tags and ``lineage --consistent`` on real Spark + Iceberg: two models of one run read
at the run's tag give what one transaction over the same orders would have shown, while the
current tables (one of them run again on newer orders) do not."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.state.metadata import read_table_meta
from lakewide.state.offsets import TableMeta
from tests.support.project_factory import make_project

pytestmark = [pytest.mark.spark]

CLI = Callable[..., tuple[int, str]]
_counter = itertools.count(1)

TOTALS = """\
{{ config(merge_engine='aggregation', primary_key='customer',
          aggregates={'total': 'sum', 'n': 'sum'}) }}
SELECT customer, amount AS total, 1 AS n FROM {{ source('src', 'orders') }}
"""
BIGGEST = """\
{{ config(materialized='table', primary_key=['customer']) }}
SELECT customer, MAX(amount) AS biggest FROM {{ source('src', 'orders') }} GROUP BY customer
"""
RANKED = """\
{{ config(materialized='table') }}
SELECT customer, total FROM {{ ref('totals') }} WHERE total >= 10
"""
LATE = """\
{{ config(materialized='table') }}
SELECT COUNT(*) AS orders FROM {{ source('src', 'orders') }}
"""


class Shop:
    """A project over one ``orders`` source in the session's warehouse."""

    def __init__(self, tmp_path: Path, spark: Any, warehouse: Path, extra: str = "") -> None:
        n = next(_counter)
        self.spark, self.warehouse = spark, warehouse
        self.ns, self.src = f"tags{n}_analytics", f"tags{n}_src"
        self.root = make_project(
            tmp_path / f"shop{n}",
            {
                "profiles.yml": (
                    "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
                    f"      catalog_type: hadoop\n      warehouse: {warehouse}\n"
                    f"      namespace: {self.ns}\n{extra}"
                ),
                "models/sources.yml": (
                    f"sources:\n  - name: src\n    schema: {self.src}\n"
                    "    tables:\n      - name: orders\n"
                ),
                "models/totals.sql": TOTALS,
                "models/biggest.sql": BIGGEST,
                "models/ranked.sql": RANKED,
            },
        )
        self.orders: list[tuple[str, int]] = []

    def append(self, rows: list[tuple[str, int]]) -> int:
        """Append orders (one commit); the source's new snapshot id."""
        name = f"lw.{self.src}.orders"
        frame = self.spark.createDataFrame(rows, "customer STRING, amount BIGINT").coalesce(1)
        if self.spark.catalog.tableExists(name):
            frame.writeTo(name).append()
        else:
            frame.writeTo(name).using("iceberg").create()
        self.orders += rows
        snapshot = self.meta("orders", self.src).current
        assert snapshot is not None
        return snapshot

    def meta(self, table: str, namespace: str | None = None) -> TableMeta:
        found = read_table_meta(self.warehouse, Relation("lw", namespace or self.ns, table))
        assert found is not None, table
        return found

    def table(self, name: str, version: str | None = None) -> str:
        at = "" if version is None else f" VERSION AS OF {version}"
        return f"lw.{self.ns}.{name}{at}"

    def joined(self, version: str | None = None) -> list[tuple[Any, ...]]:
        """totals JOIN biggest per customer, both at ``version`` (a quoted tag) or current."""
        rows = self.spark.sql(
            f"SELECT t.customer, t.total, t.n, b.biggest FROM {self.table('totals', version)} t "
            f"JOIN {self.table('biggest', version)} b ON t.customer = b.customer"
        ).collect()
        return sorted(tuple(r) for r in rows)


WEEK = 7 * 24 * 3600 * 1000


def expiry(shop: Shop, model: str, tag: str) -> int:
    """When Iceberg's expire_snapshots may drop the tag: its snapshot's commit time plus the
    tag's max reference age (Iceberg's rule)."""
    age = shop.spark.sql(
        f"SELECT snapshot_id, max_reference_age_in_ms FROM {shop.table(model)}.refs "
        f"WHERE name = '{tag}'"
    ).collect()
    snapshot, max_age = age[0]
    return int(shop.meta(model).snapshots[snapshot].timestamp_ms + max_age)


def one_transaction(orders: list[tuple[str, int]]) -> list[tuple[Any, ...]]:
    """The oracle: per customer the sum, count and largest of ``orders``, all at once."""
    by: dict[str, list[int]] = {}
    for customer, amount in orders:
        by.setdefault(customer, []).append(amount)
    return sorted((c, sum(a), len(a), max(a)) for c, a in by.items())


def run_tag(output: str) -> str:
    found = re.search(r"Tagged \d+ table\(s\) (lw-run-[0-9a-f]{32}) ", output)
    assert found, output
    return found.group(1)


def pair_of(output: str) -> dict[str, int]:
    return {m: int(s) for m, s in re.findall(r"^(\w+): \S+ snapshot (\d+)", output, re.M)}


@pytest.mark.slow
def test_tag_reads_the_consistent_pair(
    tmp_path: Path, spark: Any, warehouse: Path, cli: CLI
) -> None:
    shop = Shop(tmp_path, spark, warehouse)
    first = [("ann", 5), ("bob", 7), ("ann", 9), ("cid", 1)]
    s1 = shop.append(first)
    started = time.time() * 1000
    code, out = cli(shop.root, "run")
    ended = time.time() * 1000
    assert code == 0, out
    tag1 = run_tag(out)
    tagged = {m: shop.meta(m).tags.get(tag1) for m in ("totals", "biggest", "ranked")}
    assert tagged == {m: shop.meta(m).current for m in tagged}
    # kept 7 days (the default) from the run: Iceberg counts from the snapshot's commit time
    assert started + WEEK <= expiry(shop, "totals", tag1) <= ended + WEEK + 60_000

    # newer orders, and only totals runs: the current totals and biggest disagree
    second = [("bob", 30), ("dan", 4), ("ann", 1)]
    s2 = shop.append(second)
    code, out = cli(shop.root, "run", "-s", "totals")
    assert code == 0, out
    tag2 = run_tag(out)
    assert tag2 in shop.meta("totals").tags
    assert all(tag2 not in shop.meta(m).tags for m in ("biggest", "ranked"))

    at_tag = shop.joined(f"'{tag1}'")
    assert at_tag == one_transaction(first)
    current = shop.joined()
    assert current not in (one_transaction(first), one_transaction(first + second))

    # lineage --consistent: the pair the tag names, with a query that reads it
    code, out = cli(shop.root, "lineage", "--consistent", "totals", "biggest")
    assert code == 0, out
    assert pair_of(out) == {"totals": tagged["totals"], "biggest": tagged["biggest"]}
    assert tag1 in out and f"orders @ {s1}" in out
    query = out[out.index("SELECT") :]
    frame = spark.sql(query.rstrip().rstrip(";"))
    got = sorted(tuple(r) for r in frame.select("customer", "total", "n", "biggest").collect())
    assert got == one_transaction(first)

    # ranked read totals' first snapshot: the pair is that snapshot, not totals' newest
    code, out = cli(shop.root, "lineage", "--consistent", "totals", "ranked")
    assert code == 0, out
    assert pair_of(out) == {"totals": tagged["totals"], "ranked": tagged["ranked"]}
    assert pair_of(out)["totals"] != shop.meta("totals").current

    # a model first built from even newer orders shares no snapshot of them with totals
    (shop.root / "models" / "late.sql").write_text(LATE)
    s3 = shop.append([("eve", 2)])
    code, out = cli(shop.root, "run", "-s", "late")
    assert code == 0, out
    code, out = cli(shop.root, "lineage", "--consistent", "totals", "late")
    assert code == 1, out
    orders = f"lw.{shop.src}.orders"
    late = f"lw.{shop.ns}.late"
    assert f"consumed {orders} at {s2}; {late} never consumed {orders} at that snapshot" in out
    assert f"its snapshots consumed it at {s3}" in out

    # a model that fails is not tagged; the others of the run are, consistently
    (shop.root / "models" / "ranked.sql").write_text(
        "{{ config(materialized='table') }}\n"
        "SELECT customer, CAST(raise_error('boom') AS BIGINT) AS total FROM {{ ref('totals') }}\n"
    )
    code, out = cli(shop.root, "run")
    assert code == 1, out
    tag3 = run_tag(out)
    assert "Not tagged" in out and "ranked: error in this run" in out
    assert tag3 in shop.meta("totals").tags and tag3 in shop.meta("biggest").tags
    assert tag3 not in shop.meta("ranked").tags
    assert shop.joined(f"'{tag3}'") == one_transaction(shop.orders)


@pytest.mark.slow
def test_named_tag_refused_replaced_and_checked(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: CLI,
    cli_streams: Callable[..., tuple[int, str, str]],
) -> None:
    shop = Shop(tmp_path, spark, warehouse, extra="      tag_retention: 2 hours\n")
    shop.append([("ann", 5), ("bob", 12)])
    code, out, err = cli_streams(shop.root, "run", "--tag", "release-1.0")
    assert code == 0, out + err
    assert "Tagged 3 table(s) release-1.0 (retained 2 hours)" in out
    first = {m: shop.meta(m).current for m in ("totals", "biggest", "ranked")}
    assert {m: shop.meta(m).tags.get("release-1.0") for m in first} == first
    assert (
        expiry(shop, "biggest", "release-1.0")
        >= shop.meta("biggest").snapshots[first["biggest"]].timestamp_ms + 2 * 3600 * 1000
    )

    # the name is taken: refused before anything runs, the new orders stay unread
    shop.append([("ann", 20)])
    code, out = cli(shop.root, "run", "--tag", "release-1.0")
    assert code == 2, out
    assert "tag 'release-1.0' exists already" in out and "--replace-tag" in out
    assert {m: shop.meta(m).current for m in first} == first
    code, out = cli(shop.root, "build", "--tag", "release-1.0")  # checked once, before seeding
    assert code == 2 and out.count("exists already") == 1, out
    assert {m: shop.meta(m).current for m in first} == first

    for bad in (["--tag", "a`b"], ["--tag", "main"], ["--no-tag", "--tag", "x"], ["--replace-tag"]):
        code, out = cli(shop.root, "run", *bad)
        assert code == 2, (bad, out)
    assert {m: shop.meta(m).current for m in first} == first

    # moved to this run's snapshots; a table this run does not tag loses it (it is stale)
    code, out = cli(shop.root, "run", "-s", "totals", "--tag", "release-1.0", "--replace-tag")
    assert code == 0, out
    assert shop.meta("totals").tags["release-1.0"] == shop.meta("totals").current != first["totals"]
    assert "release-1.0" not in shop.meta("biggest").tags
    assert "release-1.0" not in shop.meta("ranked").tags

    # --no-tag: the run commits, nothing is tagged
    shop.append([("cid", 3)])
    before = {m: dict(shop.meta(m).tags) for m in first}
    code, out = cli(shop.root, "run", "--no-tag")
    assert code == 0, out
    assert "Tagged" not in out
    assert {m: shop.meta(m).tags for m in first} == before
    assert shop.meta("totals").current != shop.meta("totals").tags["release-1.0"]

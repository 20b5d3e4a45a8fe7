"""lakewide as a Spark Connect client with no Java at all, against a real Connect server.

One server for the file (tests/connect/conftest.py); the client is a separate ``lakewide``
process whose environment has no ``java`` and no JAVA_HOME. Two models with two merge engines
(partial_update, aggregation) over two sources the test appends to, and a CSV seed. The last
test stops the server.
"""

from __future__ import annotations

import itertools
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.nodes import Relation
from lakewide.state.metadata import HadoopMetadataReader
from tests.connect.conftest import Client
from tests.support.connect_server import ConnectServer
from tests.support.project_factory import make_project, no_java_env

pytestmark = pytest.mark.slow
TOKEN = "tok-9f8e7d6c5b4a"  # the Connect token, through env_var(): never in any output
WIDE = """\
{{ config(merge_engine='partial_update', primary_key='order_id', sequence_field='ts') }}
SELECT order_id, amount, CAST(NULL AS STRING) AS city, ts FROM {{ source('src', 'orders') }}
UNION ALL
SELECT order_id, CAST(NULL AS BIGINT), city, ts FROM {{ source('src', 'addresses') }}
"""
TOTALS = """\
{{ config(merge_engine='aggregation', primary_key='customer',
          aggregates={'amount': 'sum', 'orders': 'sum'}) }}
SELECT customer, amount, CAST(1 AS BIGINT) AS orders FROM {{ source('src', 'orders') }}
"""
SCHEMAS = {
    "orders": "order_id bigint, customer string, amount bigint, ts bigint",
    "addresses": "order_id bigint, city string, ts bigint",
}
_ids = itertools.count(1)


class Shop:
    """The project on disk, its source tables (written through the tests' own session) and
    the rows every model must hold, folded here in Python."""

    def __init__(self, root: Path, spark: Any, warehouse: Path, url: str) -> None:
        n = next(_ids)
        self.ns, self.src = f"c{n}_out", f"c{n}_src"
        self.spark, self.warehouse = spark, warehouse
        host_url = url.replace("127.0.0.1", "localhost")  # a token on loopback: no TLS needed
        self.root = make_project(
            root,
            {
                "profiles.yml": f"""\
                demo:
                  target: dev
                  outputs:
                    dev:
                      connect_url: "{{{{ env_var('LW_CONNECT_URL') }}}}"
                      connect_token: "{{{{ env_var('LW_CONNECT_TOKEN') }}}}"
                      catalog: lw
                      catalog_type: hadoop
                      warehouse: {warehouse}
                      namespace: {self.ns}
                """,
                "models/sources.yml": f"""\
                sources:
                  - name: src
                    schema: {self.src}
                    tables:
                      - name: orders
                      - name: addresses
                """,
                "models/wide.sql": WIDE,
                "models/totals.sql": TOTALS,
                "seeds/regions.csv": 'region,label\neu,"Europe, west"\nus,\n',
            },
        )
        env = {**no_java_env(), "LW_CONNECT_URL": host_url, "LW_CONNECT_TOKEN": TOKEN}
        self.client = Client(self.root, env)
        self.orders: list[tuple[int, str, int, int]] = []
        self.addresses: list[tuple[int, str, int]] = []
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{self.src}")

    def write(self, orders: list[tuple[int, str, int, int]], cities: list[tuple[int, str, int]]):
        """Append one batch to each source (an Iceberg append each)."""
        for table, rows in (("orders", orders), ("addresses", cities)):
            name = f"lw.{self.src}.{table}"
            frame = self.spark.createDataFrame(rows, SCHEMAS[table]).coalesce(1)
            if self.spark.catalog.tableExists(name):
                frame.writeTo(name).append()
            else:
                frame.writeTo(name).using("iceberg").create()
        self.orders += orders
        self.addresses += cities

    def batch(self, n: int) -> None:
        """Batch ``n``: new orders, updates of older ones (later ts), addresses for some."""
        orders = [(n * 10 + i, f"cust{i % 3}", n * 100 + i, n) for i in range(6)]
        orders += [((n - 1) * 10 + i, f"cust{i % 3}", 7 * n + i, n) for i in range(2) if n > 1]
        cities = [(n * 10 + i, f"city{n}-{i}", n) for i in range(0, 6, 2)]
        self.write(orders, cities)

    def expected(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every model's rows folded from all records (sequence ``ts``, then arrival)."""
        wide: dict[int, list[Any]] = {}
        for order_id, _, amount, ts in self.orders:
            wide.setdefault(order_id, [None, None, None])
            wide[order_id][0], wide[order_id][2] = amount, max(ts, wide[order_id][2] or 0)
        for order_id, city, ts in self.addresses:
            wide.setdefault(order_id, [None, None, None])
            wide[order_id][1], wide[order_id][2] = city, max(ts, wide[order_id][2] or 0)
        totals: dict[str, list[int]] = {}
        for _, customer, amount, _ in self.orders:
            total = totals.setdefault(customer, [0, 0])
            total[0], total[1] = total[0] + amount, total[1] + 1
        return {
            "wide": sorted((k, *v) for k, v in wide.items()),
            "totals": sorted((k, *v) for k, v in totals.items()),
        }

    def rows(self, ref: str | None = None) -> dict[str, list[tuple[Any, ...]]]:
        """Every model's rows as the server reads them (lakewide's hidden columns left out), on
        main or ``ref`` (``branch_<name>``)."""
        found = {}
        for model in ("wide", "totals"):
            self.spark.catalog.refreshTable(f"lw.{self.ns}.{model}")
            frame = self.spark.table(f"lw.{self.ns}.{model}" + (f".{ref}" if ref else ""))
            frame = frame.select(*(c for c in frame.columns if not c.startswith("__lw_")))
            found[model] = sorted(tuple(r) for r in frame.collect())
        return found

    def heads(self, model: str) -> int | None:
        """The model table's main head, read without Spark."""
        meta = HadoopMetadataReader(self.warehouse).table_meta(Relation("lw", self.ns, model))
        return None if meta is None else meta.current

    def summaries(self, model: str) -> list[dict[str, str]]:
        """The model's snapshot summaries, oldest first, read without Spark."""
        meta = HadoopMetadataReader(self.warehouse).table_meta(Relation("lw", self.ns, model))
        assert meta is not None
        ordered = sorted(meta.snapshots.values(), key=lambda s: s.timestamp_ms)
        return [dict(s.summary) for s in ordered]


@pytest.fixture
def shop(
    tmp_path: Path, remote: Any, connect_warehouse: Path, connect_server: ConnectServer
) -> Iterator[Shop]:
    yield Shop(tmp_path / "project", remote, connect_warehouse, connect_server.url)


def _no_secret(shop: Shop, *outputs: str) -> None:
    """The token is in no output and no artifact the client wrote."""
    for out in outputs:
        assert TOKEN not in out
    for path in shop.root.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_build_then_incremental_runs_match_a_full_refresh(shop: Shop) -> None:
    shop.batch(1)
    code, out = shop.client("build")
    assert code == 0, out
    assert "connected to Spark 4." in out and "Iceberg 1.1" in out, out
    assert shop.rows() == shop.expected()
    seeded = shop.spark.table(f"lw.{shop.ns}.regions").collect()
    assert sorted(tuple(r) for r in seeded) == [("eu", "Europe, west"), ("us", None)]
    outputs = [out]
    shop.batch(2)  # new keys, later updates of old ones, addresses of some
    code, out = shop.client("run")
    assert code == 0, out
    outputs.append(out)
    assert shop.rows() == shop.expected()
    for model in ("wide", "totals"):  # each commit carries its own model's properties
        owners = {s["lakewide.model"] for s in shop.summaries(model) if "lakewide.model" in s}
        assert owners == {model}, owners
    incremental = shop.rows()
    code, out = shop.client("run", "--full-refresh")
    assert code == 0, out
    assert shop.rows() == incremental
    outputs.append(out)
    # an environment on branch dev (Iceberg 1.12, Spark 4.1): the statements name the tables'
    # branch (<table>.branch_dev) for the MERGEs and offsets-only commits; publish
    # fast-forwards main
    heads = {m: shop.heads(m) for m in ("wide", "totals")}
    shop.batch(3)
    code, out = shop.client("run", "--branch", "dev")
    assert code == 0, out
    assert shop.rows() == incremental  # main's readers see no change
    assert {m: shop.heads(m) for m in ("wide", "totals")} == heads
    assert shop.rows("branch_dev") == shop.expected()
    outputs.append(out)
    code, out = shop.client("publish", "--branch", "dev")
    assert code == 0 and "2 table(s) fast-forwarded" in out, out
    assert shop.rows() == shop.expected()
    _no_secret(shop, *outputs, out)


MIRROR = """\
{{ config(merge_engine='partial_update', primary_key='k', remove_record_on_delete=true) }}
SELECT k, v FROM {{ source('src', 'mirror') }} WHERE v % 2 = 0
"""


def test_a_merge_on_read_mirror_read_over_connect_matches_its_current_rows(shop: Shop) -> None:
    """A mirror kept by merge-on-read MERGEs, read over Connect (by marking: no file staging),
    its old images with only the key and the filter's column (retract_columns)."""
    table = f"lw.{shop.src}.mirror"
    mor = ", ".join(f"'write.{w}.mode' = 'merge-on-read'" for w in ("merge", "update", "delete"))
    shop.spark.sql(
        f"CREATE TABLE {table} (k BIGINT, v BIGINT, note STRING) USING iceberg "
        f"TBLPROPERTIES ('format-version' = '2', {mor})"
    )
    shop.spark.sql(f"INSERT INTO {table} SELECT id, id * 2, 'n' FROM range(0, 30)")
    sources = shop.root / "models" / "sources.yml"
    sources.write_text(sources.read_text() + "      - name: mirror\n")
    (shop.root / "models" / "mirror.sql").write_text(MIRROR)

    def current() -> list[tuple[Any, ...]]:
        shop.spark.catalog.refreshTable(f"lw.{shop.ns}.mirror")  # written by the client
        rows = shop.spark.table(f"lw.{shop.ns}.mirror").select("k", "v").collect()
        return sorted(tuple(r) for r in rows)

    def kept() -> list[tuple[Any, ...]]:  # the filter over the mirror's rows, in Python
        rows = shop.spark.table(table).select("k", "v").collect()
        return sorted((k, v) for k, v in rows if v % 2 == 0)

    code, out = shop.client("run", "--select", "mirror")
    assert code == 0, out
    assert current() == kept()
    # updates out of the filter (odd), within it (even), and deletes, each in place
    shop.spark.sql(
        f"MERGE INTO {table} t USING (SELECT id AS k FROM range(0, 30)) s ON t.k = s.k "
        "WHEN MATCHED AND s.k % 5 = 0 THEN DELETE "
        "WHEN MATCHED AND s.k % 3 = 0 THEN UPDATE SET v = t.v + 1 "
        "WHEN MATCHED AND s.k % 3 = 1 THEN UPDATE SET v = t.v + 2"
    )
    assert shop.spark.sql(f"SELECT * FROM {table}.delete_files").count() > 0
    code, out = shop.client("run", "--select", "mirror")
    assert code == 0, out
    results = json.loads((shop.root / "target" / "run_results.json").read_text())
    [mirror] = [r for r in results["results"] if r["name"] == "mirror"]
    assert [r["mode"] for r in mirror["ranges"]] == ["positions"], mirror["ranges"]
    assert current() == kept() != []
    incremental = current()
    code, out = shop.client("run", "--select", "mirror", "--full-refresh")
    assert code == 0, out
    assert current() == incremental


def _wait_for(process: Any, text: str, timeout: float = 240.0) -> list[str]:
    """Lines of ``process``'s output up to the first holding ``text``."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError("".join(lines))


def test_a_client_killed_mid_run_resumes_exactly_with_two_racing(shop: Shop) -> None:
    shop.batch(1)
    assert shop.client("run")[0] == 0
    shop.batch(2)
    process = shop.client.popen("run", "--threads", "1")
    _wait_for(process, "wide")  # the first model has started
    process.send_signal(signal.SIGKILL)
    process.wait()
    racing = [shop.client.popen("run") for _ in range(2)]  # two clients resume at once
    done = [(p.communicate(timeout=600)[0], p.returncode) for p in racing]
    assert 0 in [code for _, code in done], done
    for out, code in done:  # the other one waited for the warehouse lock, or gave up cleanly
        assert code == 0 or (code == 2 and "lock" in out and "Traceback" not in out), out
    assert shop.rows() == shop.expected()  # sums: no batch lost, none applied twice
    for model in ("wide", "totals"):
        marked = [s for s in shop.summaries(model) if any(k.startswith("lakewide") for k in s)]
        assert marked, shop.summaries(model)


def test_a_procedure_called_over_connect_runs_once(shop: Shop) -> None:
    """SPARK-51273: a CALL sent over Connect ran twice. add_files refuses files the table has
    already, so one clean call and each row once show it ran once."""
    shop.batch(1)
    copy = f"lw.{shop.src}.orders_copy"
    shop.spark.sql(f"CREATE TABLE {copy} USING iceberg AS SELECT * FROM lw.{shop.src}.orders")
    shop.spark.sql(f"DELETE FROM {copy}")
    files = shop.warehouse / shop.src / "orders" / "data"
    call = (
        f"CALL lw.system.add_files(table => '{shop.src}.orders_copy', "
        f"source_table => '`parquet`.`{files}`')"
    )
    rows = shop.spark.sql(call).collect()
    assert len(rows) == 1 and rows[0][0] >= 1, rows
    assert shop.spark.table(copy).count() == len(shop.orders)


def test_the_server_going_away_mid_run_fails_clearly(
    shop: Shop, connect_server: ConnectServer
) -> None:
    """Runs last: it stops the file's server."""
    shop.batch(1)
    assert shop.client("run")[0] == 0
    before = {m: shop.summaries(m) for m in ("wide", "totals")}
    done = shop.expected()
    shop.batch(2)
    process = shop.client.popen("run", "--threads", "1")
    lines = _wait_for(process, "connected to Spark")  # the run has begun: its session is open
    connect_server.process.kill()
    out, _ = process.communicate(timeout=300)
    out = "".join(lines) + out
    assert process.returncode == 1, out
    assert "Traceback" not in out, out
    assert "the Spark Connect server" in out and "went away during the run" in out, out
    for model in ("wide", "totals"):
        after = shop.summaries(model)
        assert after[: len(before[model])] == before[model]
        # a commit made before the server went is a whole one: data and offsets together
        assert all(any(k.startswith("lakewide") for k in s) for s in after[len(before[model]) :])
    assert done  # the rows are checked through the server in the tests above

"""The example project end to end on real Spark + Iceberg.

The tests that read the example as its first build leaves it, or run it again without new
data, share one build (``built``, tests/integration/conftest.py); the others seed and build a
copy of their own."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest

from lakewide.run.models.outcomes import ModelResult
from tests.integration.conftest import REPO, ProjectRun, null_first
from tests.oracle import engines
from tests.oracle import partial_update as oracle

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# From the Fluss partial-update article (issue #2): the merged wide table after all sources.
USER_REC_WIDE = [
    ("user_101", "prod_501", 0.92, 3, 1),
    ("user_101", "prod_502", 0.78, 1, 2),
    ("user_102", "prod_503", 0.83, 7, 1),
    ("user_103", "prod_501", 0.67, 4, 1),
    ("user_104", "prod_504", 0.88, 2, 1),
]
ORDER_COLUMNS = [
    "order_id",
    "product_type",
    "plat_name",
    "ref_id",
    "start_city_name",
    "end_city_name",
    "create_time",
    "order_status",
    "binlog_time",
]
INFO_COLUMNS = [
    "order_id",
    "product_type",
    "plat_name",
    "ref_id",
    "create_time",
    "order_status",
    "binlog_time",
]
ADDRESS_COLUMNS = ["order_id", "start_city_name", "end_city_name", "binlog_time"]


def _typed(row: dict[str, str]) -> dict:
    out: dict = {}
    for column, value in row.items():
        if column in ("order_id", "ref_id", "order_status"):
            out[column] = int(value)
        elif column.endswith("_time"):
            out[column] = dt.datetime.fromisoformat(value)
        else:
            out[column] = value
    return out


def order_records() -> list[tuple[int, dict]]:
    """(source, record) pairs read from the seed CSVs, in branch order."""
    records = []
    for source, name in enumerate(("order_info", "order_address")):
        with open(REPO / "seeds" / f"{name}.csv", newline="") as handle:
            records += [(source, _typed(row)) for row in csv.DictReader(handle)]
    return records


def test_build_gives_the_articles_wide_table(
    built: tuple[ProjectRun, dict[str, ModelResult]],
) -> None:
    example, results = built
    assert results["user_rec_wide"].plan == "bootstrap"
    assert example.rows("user_rec_wide") == USER_REC_WIDE
    expected = oracle.as_rows(
        oracle.bootstrap(order_records(), ["order_id"], ["binlog_time"]), ORDER_COLUMNS
    )
    assert example.rows("order_detail") == expected
    assert results["order_detail"].rows == len(expected)
    # downstream table model sees the wide table
    statuses = [r[7] for r in expected]
    counts = {s: statuses.count(s) for s in statuses}
    assert example.rows("order_status_counts") == sorted(counts.items(), key=null_first)


def test_second_run_without_new_data_changes_nothing(
    built: tuple[ProjectRun, dict[str, ModelResult]],
) -> None:
    example, _ = built
    before = {m: example.rows(m) for m in ("user_rec_wide", "order_detail")}
    results = example.run()
    assert results["user_rec_wide"].plan == "incremental"
    assert {m: example.rows(m) for m in before} == before


def test_appended_rows_merge_into_owned_columns_only(example: ProjectRun) -> None:
    example.seed()
    example.run()
    # a new click count for an existing key, a brand-new key from impressions only,
    # and a NULL click count that must not erase the stored one
    example.sql(
        "INSERT INTO {ods}.clicks VALUES ('user_101', 'prod_501', 5), "
        "('user_102', 'prod_503', NULL)"
    )
    example.sql("INSERT INTO {ods}.impressions VALUES ('user_105', 'prod_505', 9)")
    results = example.run("user_rec_wide")
    assert results["user_rec_wide"].plan == "incremental"
    expected = [r for r in USER_REC_WIDE if r[:2] != ("user_101", "prod_501")]
    expected += [("user_101", "prod_501", 0.92, 3, 5), ("user_105", "prod_505", None, 9, None)]
    assert example.rows("user_rec_wide") == sorted(expected, key=null_first)


def test_late_record_only_fills_null_columns(example: ProjectRun) -> None:
    example.seed()
    example.run("order_detail")
    late = dt.datetime(2024, 5, 1, 8, 0, 0)
    # order 1003 has no address yet; order 1001's status 2 is newer than this late row
    example.sql(
        "INSERT INTO {ods}.order_address VALUES "
        "(1003, 'Nanjing', 'Wuhan', TIMESTAMP '2024-05-01 08:00:00')"
    )
    example.sql(
        "INSERT INTO {ods}.order_info VALUES (1001, 'watch', 'web', 999, "
        "TIMESTAMP '2024-05-01 08:00:00', 9, TIMESTAMP '2024-05-01 08:00:00')"
    )
    example.run("order_detail")
    appended = [
        (
            1,
            {
                "order_id": 1003,
                "start_city_name": "Nanjing",
                "end_city_name": "Wuhan",
                "binlog_time": late,
            },
        ),
        (
            0,
            {
                "order_id": 1001,
                "product_type": "watch",
                "plat_name": "web",
                "ref_id": 999,
                "create_time": late,
                "order_status": 9,
                "binlog_time": late,
            },
        ),
    ]
    first = order_records()
    # bootstrap on the seeds, then the next run merges only the appended rows
    expected = oracle.incremental([first, appended], ["order_id"], ["binlog_time"], 2)
    rows = example.rows("order_detail")
    assert rows == oracle.as_rows(expected, ORDER_COLUMNS)
    by_id = {r[0]: r for r in rows}
    assert by_id[1001][1] == "phone" and by_id[1001][7] == 2  # late row lost on 1001
    assert by_id[1003][4:6] == ("Nanjing", "Wuhan")  # but filled 1003's nulls


# models/wide/order_groups.sql: order_detail's sources as sequence groups, each guarded by its
# own source's binlog_time (renamed info_time / address_time)
INFO_GROUP = ["product_type", "plat_name", "create_time", "order_status"]
ADDRESS_GROUP = ["start_city_name", "end_city_name"]
GROUP_COLUMNS = ["order_id", *INFO_GROUP, "info_time", *ADDRESS_GROUP, "address_time"]
GROUPS_SPEC = engines.Spec(
    "partial_update",
    ["order_id"],
    GROUP_COLUMNS,
    owned=[{*INFO_GROUP, "info_time"}, {*ADDRESS_GROUP, "address_time"}],
    groups={"info_time": INFO_GROUP, "address_time": ADDRESS_GROUP},
)


def group_records(records: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """order_detail's (source, record) pairs as order_groups reads them."""
    renamed = ("info_time", "address_time")
    return [
        (
            source,
            {
                **{k: v for k, v in r.items() if k != "binlog_time"},
                renamed[source]: r["binlog_time"],
            },
        )
        for source, r in records
    ]


def test_sequence_groups_example_matches_the_oracle(example: ProjectRun) -> None:
    example.seed()
    assert example.run("order_groups")["order_groups"].plan == "bootstrap"
    first = group_records(order_records())
    assert example.rows("order_groups") == engines.as_rows(
        engines.bootstrap(GROUPS_SPEC, first), GROUP_COLUMNS
    )
    # a late order_info record of 1001 (older than its stored info_time), a newer address of
    # 1002 whose NULL end city replaces the stored one, a first address for 1003
    appended = [
        (0, (1001, "watch", "web", 999, "2024-05-01 08:00:00", 3, "2024-05-01 09:30:00")),
        (1, (1002, "Beijing", None, "2024-05-02 08:00:00")),
        (1, (1003, None, "Wuhan", "2024-05-01 08:00:00")),
    ]
    batch: list[tuple[int, dict]] = []
    for source, values in appended:
        columns = INFO_COLUMNS if source == 0 else ADDRESS_COLUMNS
        literals = ", ".join(
            "NULL" if v is None else f"TIMESTAMP '{v}'" if "-" in str(v) else repr(v)
            for v in values
        )
        table = "order_info" if source == 0 else "order_address"
        example.sql(f"INSERT INTO {{ods}}.{table} VALUES ({literals})")
        record = dict(zip(columns, values))
        batch.append((source, _typed({k: v for k, v in record.items() if v is not None})))
    assert example.run("order_groups")["order_groups"].plan == "incremental"
    expected = engines.incremental(GROUPS_SPEC, [first, group_records(batch)])
    rows = example.rows("order_groups")
    assert rows == engines.as_rows(expected, GROUP_COLUMNS)
    by_id = {r[0]: dict(zip(GROUP_COLUMNS, r)) for r in rows}
    assert (by_id[1001]["plat_name"], by_id[1001]["order_status"]) == ("app", 2)  # kept
    assert (by_id[1002]["start_city_name"], by_id[1002]["end_city_name"]) == ("Beijing", None)
    assert by_id[1003]["end_city_name"] == "Wuhan"


def test_full_refresh_equals_bootstrap(built: tuple[ProjectRun, dict[str, ModelResult]]) -> None:
    example, _ = built
    first = example.rows("order_detail")
    results = example.run("order_detail", full_refresh=True)
    assert results["order_detail"].plan == "full-refresh"
    assert example.rows("order_detail") == first


def test_table_partitioned_as_configured(
    built: tuple[ProjectRun, dict[str, ModelResult]],
) -> None:
    example, _ = built
    spec = example.spark.sql(f"DESCRIBE TABLE EXTENDED lw.{example.namespace}.order_detail")
    text = " ".join(str(tuple(r)) for r in spec.collect())
    assert "bucket(4, order_id)" in text
    props = example.spark.sql(f"SHOW TBLPROPERTIES lw.{example.namespace}.order_detail")
    values = {r[0]: r[1] for r in props.collect()}
    assert values["lakewide.merge-engine"] == "partial_update"
    assert values["lakewide.primary-key"] == "order_id"


def test_unused_path_is_not_read(example: ProjectRun, tmp_path: Path) -> None:
    """A model error fails that model (status error) and skips its downstream."""
    from lakewide.run.models.executor import run_models

    example.seed()
    broken = example.root / "models" / "wide" / "order_detail.sql"
    broken.write_text(
        broken.read_text().replace("order_status, binlog_time", "no_such_column, binlog_time")
    )
    manifest = example.manifest()
    results = {
        r.name: r
        for r in run_models(
            manifest, ["order_detail", "order_status_counts"], example.adapter(manifest)
        )
    }
    assert results["order_detail"].status == "error"
    assert "no_such_column" in results["order_detail"].message
    assert results["order_status_counts"].status == "skipped"
    assert not example.spark.catalog.tableExists(f"lw.{example.namespace}.order_detail")


def event_records() -> list[dict]:
    with open(REPO / "seeds" / "user_events.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        {
            "user_id": r["user_id"],
            "event_time": dt.datetime.fromisoformat(r["event_time"]),
            "amount": float(r["amount"]) if r["amount"] else None,
            "page": r["page"] or None,
            "is_mobile": r["is_mobile"] == "true",
        }
        for r in rows
    ]


def activity_reference(events: list[dict]) -> list[tuple]:
    """The user_activity counters computed directly from the events (independent of lakewide)."""
    out = []
    for user in sorted({e["user_id"] for e in events}):
        mine = sorted((e for e in events if e["user_id"] == user), key=lambda e: e["event_time"])
        amounts = [e["amount"] for e in mine if e["amount"] is not None]
        pages = [e["page"] for e in mine if e["page"] is not None]
        out.append(
            (
                user,
                len(mine),
                sum(amounts) if amounts else None,
                max(amounts) if amounts else None,
                pages[-1] if pages else None,
                " > ".join(pages) if pages else None,
                mine[0]["event_time"],
                any(e["is_mobile"] for e in mine),
                mine[-1]["event_time"],
            )
        )
    return out


def test_aggregation_example_counts_events_incrementally(example: ProjectRun) -> None:
    example.seed()
    example.run("user_activity")
    events = event_records()
    assert example.rows("user_activity") == activity_reference(events)
    # appended events: the next run reads only these
    new = [
        ("user_101", "2024-05-01 10:00:00", 5.0, "home", False),
        ("user_104", "2024-05-01 10:01:00", 1.0, None, True),
    ]
    for user, ts, amount, page, mobile in new:
        page_sql = "NULL" if page is None else f"'{page}'"
        example.sql(
            f"INSERT INTO {{ods}}.user_events VALUES ('{user}', TIMESTAMP '{ts}', "
            f"{amount}, {page_sql}, {str(mobile).lower()})"
        )
        events.append(
            {
                "user_id": user,
                "event_time": dt.datetime.fromisoformat(ts),
                "amount": amount,
                "page": page,
                "is_mobile": mobile,
            }
        )
    results = example.run("user_activity")
    assert results["user_activity"].plan == "incremental"
    assert example.rows("user_activity") == activity_reference(events)

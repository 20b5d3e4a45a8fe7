"""Snapshot models and the temporal join rewrite, compiled without a JVM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from lakewide.compiler import CompiledModel
from lakewide.compiler.plans.snapshot_plan import SnapshotPlans
from lakewide.compiler.plans.upstream import compile_in
from lakewide.project.config.model_config import parse_model_config
from lakewide.vocabulary.dialect import to_sql
from lakewide.vocabulary.errors import CompileError, ConfigError
from tests.support.project_factory import make_project, manifest_of, run_main

SOURCES = """
sources:
  - name: src
    schema: ods
    tables:
      - name: customers
      - name: orders
"""
SNAPSHOT = """
{{ config(materialized='snapshot', unique_key='customer_id', CONFIG) }}
SELECT customer_id, name, tier, updated_at FROM {{ source('src', 'customers') }}
"""
TIMESTAMP = "strategy='timestamp', updated_at='updated_at'"
ORDERS = """
{{ config(JOIN_CONFIG) }}
SELECT o.order_id, o.order_ts, c.tier
FROM {{ source('src', 'orders') }} AS o
JOIN_KIND {{ ref('customers_snapshot') }} FOR SYSTEM_TIME AS OF o.order_ts AS c
  ON o.customer_id = c.customer_id
"""


def project(
    tmp_path: Path,
    config: str = TIMESTAMP,
    join: str = "LEFT JOIN",
    join_config: str = "materialized='table'",
    extra: dict[str, str] | None = None,
) -> Path:
    return make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/customers_snapshot.sql": SNAPSHOT.replace("CONFIG", config),
            "models/orders_wide.sql": ORDERS.replace("JOIN_KIND", join).replace(
                "JOIN_CONFIG", join_config
            ),
            **(extra or {}),
        },
    )


def compiled(root: Path, name: str) -> CompiledModel:
    manifest = manifest_of(root)
    return compile_in(manifest, manifest.models[name])


def _on(model: CompiledModel) -> str:
    join = model.bootstrap.find(exp.Join)
    assert join is not None
    return join.args["on"].sql("spark")


# ---------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("raw", "key", "says"),
    [
        ({"strategy": "timestamp", "updated_at": "u"}, "unique_key", "needs unique_key"),
        ({"unique_key": "id"}, "strategy", "needs strategy"),
        ({"unique_key": "id", "strategy": "timestamp"}, "updated_at", "needs updated_at"),
        ({"unique_key": "id", "strategy": "check"}, "check_cols", "needs check_cols"),
        (
            {"unique_key": "id", "strategy": "timestamp", "updated_at": "u", "check_cols": "all"},
            "check_cols",
            "strategy='check'",
        ),
        (
            {"unique_key": "id", "strategy": "check", "check_cols": "all", "hard_deletes": "drop"},
            "hard_deletes",
            "'ignore', 'invalidate' or 'new_record'",
        ),
        (
            {"unique_key": "id", "strategy": "check", "check_cols": "all", "ignore_delete": True},
            "ignore_delete",
            "does not apply to materialized='snapshot'",
        ),
        (
            {"primary_key": "id", "strategy": "check", "check_cols": "all", "unique_key": "id"},
            "primary_key",
            "unique_key",
        ),
        (
            {
                "unique_key": "id",
                "strategy": "check",
                "check_cols": "all",
                "snapshot_meta_column_names": {"valid_from": "x"},
            },
            "snapshot_meta_column_names.valid_from",
            "dbt_valid_from",
        ),
    ],
)
def test_snapshot_config_errors_name_the_key(raw: dict[str, Any], key: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_model_config({"materialized": "snapshot", **raw}, path="models/s.sql", line=1)
    assert err.value.key == key and says in err.value.message


def test_snapshot_keys_belong_to_snapshot_models() -> None:
    with pytest.raises(ConfigError) as err:
        parse_model_config({"materialized": "table", "unique_key": "id"}, path="m.sql")
    assert err.value.key == "unique_key" and "materialized='snapshot'" in err.value.message
    config = parse_model_config(
        {
            "materialized": "snapshot",
            "unique_key": "a, b",
            "strategy": "check",
            "check_cols": "all",
        },
        path="m.sql",
    )
    assert config.kind == "snapshot" and config.unique_key == ["a", "b"]


# ---------------------------------------------------------------- the snapshot's statements


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("SELECT * FROM {{ source('src', 'customers') }}", "names its columns"),
        ("SELECT name, tier, updated_at FROM {{ source('src', 'customers') }}", "unique_key"),
        (
            "SELECT customer_id, updated_at FROM {{ source('src', 'customers') }} UNION ALL "
            "SELECT customer_id, updated_at FROM {{ source('src', 'customers') }}",
            "one SELECT",
        ),
    ],
)
def test_snapshot_query_errors(tmp_path: Path, sql: str, says: str) -> None:
    config = "{{ config(materialized='snapshot', unique_key='customer_id', " + TIMESTAMP + ") }}\n"
    root = project(tmp_path, extra={"models/customers_snapshot.sql": config + sql})
    with pytest.raises(CompileError) as err:
        compiled(root, "customers_snapshot")
    assert says in err.value.message and "customers_snapshot" in str(err.value)


def test_snapshot_compiles_to_a_ctas_and_a_merge_on_scd_id(tmp_path: Path) -> None:
    model = compiled(project(tmp_path), "customers_snapshot")
    assert model.kind == "snapshot"
    create = model.bootstrap
    assert isinstance(create, exp.Create) and isinstance(create.expression, exp.Select)
    assert create.expression.named_selects == [
        "customer_id",
        "name",
        "tier",
        "updated_at",
        "dbt_scd_id",
        "dbt_updated_at",
        "dbt_valid_from",
        "dbt_valid_to",
    ]
    files = model.files(plans=True)
    assert {"snapshot.sql", "merge_incremental.sql", "merge_full.sql"} <= set(files)
    assert {"plans/incremental_read_incremental.sql", "plans/incremental_read_full.sql"} <= set(
        files
    )
    merge = sqlglot.parse(files["merge_full.sql"], read="spark")[-1]
    assert isinstance(merge, exp.Merge)
    assert merge.args["on"].sql("spark") == "`t`.`dbt_scd_id` = `s`.`dbt_scd_id`"
    # only the end of a stored version is ever updated
    update = merge.find(exp.Update)
    assert update is not None and [e.this.name for e in update.expressions] == ["dbt_valid_to"]


def _history(model: CompiledModel, mode: str) -> exp.Expr:
    plans = model.plans
    assert isinstance(plans, SnapshotPlans)
    [stage] = [s for s in plans.merges[mode] if getattr(s, "view", "") == "__lw_snap_history"]
    return stage.query  # type: ignore[union-attr]


def test_only_a_full_read_sees_hard_deletes(tmp_path: Path) -> None:
    model = compiled(
        project(tmp_path, config=TIMESTAMP + ", hard_deletes='new_record'"), "customers_snapshot"
    )
    full, appends = _history(model, "full"), _history(model, "incremental")
    full_joins = {j.side or j.kind for j in full.find_all(exp.Join)}
    append_joins = {j.kind for j in appends.find_all(exp.Join)}
    assert "LEFT" in full_joins and "SEMI" in append_joins  # every key vs the new rows' keys
    # deletion records (dbt_is_deleted 'True' from now) only on a full read
    assert "'True' AS `dbt_is_deleted`" in to_sql(full) and "'True' AS `dbt_is_deleted`" not in (
        to_sql(appends)
    )
    assert "dbt_is_deleted" in model.bootstrap.expression.named_selects  # type: ignore[union-attr]


def test_meta_column_names_rename_the_dbt_columns(tmp_path: Path) -> None:
    config = (
        TIMESTAMP + ", snapshot_meta_column_names={'dbt_valid_from': 'vf', 'dbt_valid_to': 'vt'}"
    )
    root = project(tmp_path, config=config)
    model = compiled(root, "customers_snapshot")
    names = model.bootstrap.expression.named_selects  # type: ignore[union-attr]
    assert "vf" in names and "vt" in names and "dbt_valid_from" not in names
    on = _on(compiled(root, "orders_wide"))
    assert "`c`.`vf`" in on and "`c`.`vt`" in on


# ---------------------------------------------------------------- the temporal join


@pytest.mark.parametrize("join", ["LEFT JOIN", "JOIN", "INNER JOIN"])
def test_temporal_join_becomes_a_range_join(tmp_path: Path, join: str) -> None:
    model = compiled(project(tmp_path, join=join), "orders_wide")
    joined = model.bootstrap.find(exp.Join)
    assert joined is not None and joined.args.get("side", "") == ("LEFT" if "LEFT" in join else "")
    assert _on(model) == (
        "(o.customer_id = c.customer_id) AND (o.order_ts >= `c`.`dbt_valid_from` AND "
        "(`c`.`dbt_valid_to` IS NULL OR o.order_ts < `c`.`dbt_valid_to`))"
    )
    assert model.bootstrap.find(exp.Version) is None


def test_temporal_join_skips_deletion_records(tmp_path: Path) -> None:
    root = project(tmp_path, config=TIMESTAMP + ", hard_deletes='new_record'")
    assert _on(compiled(root, "orders_wide")).endswith("AND `c`.`dbt_is_deleted` <> 'True')")


def test_temporal_join_in_a_key_table_branch(tmp_path: Path) -> None:
    root = project(tmp_path, join_config="merge_engine='deduplicate', primary_key='order_id'")
    model = compiled(root, "orders_wide")
    assert model.kind == "primary_key" and "o.order_ts < `c`.`dbt_valid_to`" in to_sql(
        model.merges[0].batch
    )


def test_delta_on_a_temporal_join_is_refused_quoting_what_the_model_wrote(
    tmp_path: Path,
) -> None:
    config = "merge_engine='deduplicate', primary_key='order_id', joins={'c': 'delta'}"
    with pytest.raises(CompileError) as err:
        compiled(project(tmp_path, join_config=config), "orders_wide")
    message = err.value.message
    assert "does not take a temporal join" in message and "--full-refresh" in message
    assert "FOR SYSTEM_TIME AS OF o.order_ts AS c ON o.customer_id = c.customer_id" in message
    assert "dbt_valid" not in message  # the rewritten range condition is ours, not the model's
    assert err.value.key == "joins.c" and "orders_wide.sql" in str(err.value)


def test_temporal_join_needs_a_snapshot_model(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        extra={
            "models/customers_snapshot.sql": "{{ config(materialized='table') }}\n"
            "SELECT customer_id, tier FROM {{ source('src', 'customers') }}"
        },
    )
    with pytest.raises(CompileError) as err:
        compiled(root, "orders_wide")
    assert "customers_snapshot is not a snapshot model" in err.value.message
    assert "orders_wide.sql" in str(err.value)


@pytest.mark.parametrize(
    ("join", "says"),
    [("RIGHT JOIN", "JOIN or LEFT JOIN"), ("FULL OUTER JOIN", "JOIN or LEFT JOIN")],
)
def test_temporal_join_kinds(tmp_path: Path, join: str, says: str) -> None:
    with pytest.raises(CompileError) as err:
        compiled(project(tmp_path, join=join), "orders_wide")
    assert says in err.value.message


def test_constant_time_travel_is_left_to_spark(tmp_path: Path) -> None:
    sql = (
        "{{ config(materialized='table') }}\nSELECT c.tier FROM {{ ref('customers_snapshot') }} "
        "TIMESTAMP AS OF '2024-01-01 00:00:00' AS c"
    )
    model = compiled(project(tmp_path, extra={"models/orders_wide.sql": sql}), "orders_wide")
    assert model.bootstrap.find(exp.Version) is not None


def test_compile_command_writes_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    code, out = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile")
    assert code == 0, out
    folder = root / "target" / "compiled" / "customers_snapshot"
    assert (folder / "merge_full.sql").read_text().count("MERGE INTO") == 1
    assert (
        "dbt_valid_to" in (root / "target" / "compiled" / "orders_wide" / "table.sql").read_text()
    )

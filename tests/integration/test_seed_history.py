"""A changed seed is written in its table's own history (an append when the CSV only grew,
else an overwrite; no commit when unchanged), so the models reading it stay incremental and
exact: each run equals a ``--full-refresh`` and a fold of the CSV's current rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ModelRun
from tests.integration.test_incremental import COUNTERS, SCHEMAS, totals

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _seeded(model_run: Callable[..., ModelRun]) -> ModelRun:
    m = model_run(COUNTERS, SCHEMAS)
    pyproject = m.run.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + f'seed-schema = "{m.run.seed_schema}"\n')
    return m


def _csv(root: Path, table: str, rows: list[tuple[int, int]]) -> None:
    header = SCHEMAS[table].replace(" INT", "").replace(" BIGINT", "").replace(" ", "")
    lines = [header, *(f"{k},{v}" for k, v in rows)]
    (root / "seeds").mkdir(exist_ok=True)
    (root / "seeds" / f"{table}.csv").write_text("\n".join(lines) + "\n")


def _snapshots(m: ModelRun, table: str) -> list[Any]:
    name = f"lw.{m.run.seed_schema}.{table}.snapshots"
    return m.run.spark.sql(f"SELECT operation FROM {name} ORDER BY committed_at").collect()


def test_changed_seeds_keep_downstream_incremental_and_exact(
    model_run: Callable[..., ModelRun], cli: Callable[..., tuple[int, str]]
) -> None:
    m = _seeded(model_run)
    root = m.run.root
    a, b = [(1, 2), (2, 1)], [(1, 5)]
    _csv(root, "a", a)
    _csv(root, "b", b)
    code, out = cli(root, "seed")
    assert code == 0 and "2 rows created" in out and "k int, clicks int" in out, out
    assert m.run.run()["m"].plan == "bootstrap"

    steps = [
        ("appended", "+2 rows appended", a + [(1, 3), (3, 4)], "incremental"),  # the CSV grew
        ("overwritten", "3 rows overwritten", [(1, 2), (2, 10), (3, 4)], "changelog"),  # edited
    ]
    for operation, shown, a, mode in steps:
        _csv(root, "a", a)
        code, out = cli(root, "seed")
        assert code == 0 and shown in out and "unchanged" in out, out  # b: unchanged
        assert _snapshots(m, "a")[-1].operation == {"appended": "append"}.get(
            operation, "overwrite"
        )
        result = m.run.run()["m"]
        assert result.plan == "incremental", result.message
        read = {r["relation"].rsplit(".", 1)[1]: r["mode"] for r in result.ranges}
        assert read == {"a": mode, "b": "none"}
        expected = totals([{"a": a, "b": b}])
        assert m.run.rows("m") == expected
        m.run.run(full_refresh=True)
        assert m.run.rows("m") == expected

    # a column added to b (its old rows keep theirs), in the same history: no --full-refresh
    (root / "seeds" / "b.csv").write_text("k,buys,note\n1,5,x\n2,1,\n")
    code, out = cli(root, "seed")
    assert code == 0 and "2 rows overwritten" in out and "note string" in out, out
    assert [r.operation for r in _snapshots(m, "b")] == ["append", "overwrite"]
    result = m.run.run()["m"]
    assert result.plan == "incremental", result.message
    expected = totals([{"a": a, "b": [(1, 5), (2, 1)]}])
    assert m.run.rows("m") == expected

    before = _snapshots(m, "a")
    code, out = cli(root, "seed")
    assert code == 0 and out.count("unchanged") == 2
    assert _snapshots(m, "a") == before  # an unchanged CSV: no commit


def test_load_appends_a_file_as_one_commit_and_show_inline_reads_it(
    model_run: Callable[..., ModelRun], cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    batches: list[dict[str, list[tuple]]] = [{"a": [(1, 2)], "b": [(1, 5)]}]
    m.step(batches[0])
    root, spark = m.run.root, m.run.spark
    csv = tmp_path / "a.csv"
    csv.write_text("clicks,k\n3,1\n1,4\n")  # columns in another order
    folder = tmp_path / "b_parquet"
    spark.createDataFrame([(2, 7), (4, 1)], "k INT, buys BIGINT").coalesce(1).write.parquet(
        str(folder)
    )
    [parquet] = folder.glob("*.parquet")
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text('{"k": 5, "buys": 2}\n{"k": 1, "buys": null}\n')

    for table, path, rows in (("a", csv, 2), ("b", parquet, 2), ("b", jsonl, 2)):
        before = len(_snapshots(m, table))
        code, out = cli(root, "load", f"src.{table}", str(path))
        assert code == 0 and f"+{rows} rows appended -> lw.{m.run.seed_schema}.{table}" in out, out
        assert [r.operation for r in _snapshots(m, table)[before:]] == ["append"]
    batches.append({"a": [(1, 3), (4, 1)], "b": [(2, 7), (4, 1), (5, 2)]})
    result = m.run.run()["m"]
    assert result.plan == "incremental"
    # the JSON row with a NULL count still counts as an event of key 1
    expected = [(k, c, b, e + (1 if k == 1 else 0)) for k, c, b, e in totals(batches)]
    assert m.run.rows("m") == expected

    code, out = cli(
        root,
        "show",
        "--inline",
        "select k, clicks from {{ source('src', 'a') }} order by k desc, clicks desc",
        "--limit",
        "2",
    )
    assert code == 0, out
    lines = [line.split() for line in out.splitlines()]
    header = lines.index(["k", "clicks"])  # a plain table: the header, then a line per row
    assert lines[header + 1 : header + 3] == [["4", "1"], ["1", "3"]], out  # k, clicks desc


BAD_LOADS = {
    "missing file": (["src.a", "nope.csv"], "no file"),
    "unknown table": (
        ["src.zz", "a.csv"],
        "accepted: source.table as declared in models/*.yml (src.a, src.b)",
    ),
    "column mismatch": (
        ["src.a", "wrong.csv"],
        "missing clicks; not in the table: clickz. Accepted: exactly the table's columns (k, clicks)",
    ),
    "value that does not fit": (
        ["src.a", "text.csv"],
        "text.csv:3: [clicks] value 'abc' is not a valid bigint",
    ),
    "fraction into an integer": (
        ["src.a", "fraction.json"],
        "[clicks] value '1.5' is not a valid bigint",
    ),
    "unknown suffix": (["src.a", "a.txt"], "accepted: --format csv|parquet|json"),
}


@pytest.mark.parametrize(("args", "message"), BAD_LOADS.values(), ids=BAD_LOADS.keys())
def test_bad_loads_exit_2_and_write_nothing(
    model_run: Callable[..., ModelRun],
    cli: Callable[..., tuple[int, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    m = model_run(COUNTERS, SCHEMAS)
    m.write("a", [(1, 2)])
    m.write("b", [])
    files = {
        "a.csv": "k,clicks\n1,2\n",
        "a.txt": "k,clicks\n1,2\n",
        "wrong.csv": "k,clickz\n1,2\n",
        "text.csv": "k,clicks\n1,2\n2,abc\n",
        "fraction.json": '{"k": 1, "clicks": 1.5}\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    before = _snapshots(m, "a")
    code, out = cli(m.run.root, "load", *args)
    assert code == 2 and message in out and "Traceback" not in out, out
    assert _snapshots(m, "a") == before

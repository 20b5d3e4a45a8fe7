"""Environments on Iceberg branches over chained key tables (issue 48, item 3), on real Spark +
Iceberg, each table checked against a plain-Python computation from the sources' rows.

A key table with a key table downstream keeps a changelog table (``changelog_producer``); a
run on a branch reads the upstream at pinned snapshots and the model's own table before and
after its MERGE. Iceberg refused every such read while the session's ``spark.wap.branch`` was
set ("Cannot override ref, already set snapshot id=..."), after the MERGE had committed, so
the branch was left with the model ahead of its changelog table. Here: the newcomer's project
(a partial_update with sequence groups and an aggregation over it) through a branch build, a
failing data test refusing publish, runs killed before and after a MERGE's changelog append
(the model's branch never ahead of its changelog table: lakewide.run.models.branch_stage; the next
run settles it), the fix, publish, production continuing, and a new column added in place on
a branch (the model's changelog table migrated with it; main's rows unchanged, the column NULL
there, until publish); then every other chain the project allows, parametrised.
"""

from __future__ import annotations

import itertools
import json
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler.schema.contract import CONTRACT, line_key
from lakewide.compiler.statements.build_changes import changelog_relation
from lakewide.project.nodes import Relation
from lakewide.state.branches import on_branch
from lakewide.state.changelog_producer import missing_changes
from lakewide.state.metadata import read_table_meta
from tests.integration.conftest import hadoop_project, null_first
from tests.support.inline_rows import write_rows
from tests.support.killed_process import killed_at

pytestmark = [pytest.mark.spark]

_counter = itertools.count(1)
PROFILES = "id int, name string, city string, p_ts bigint"
TIER = "tier string"  # a column profiles gains later
ORDERS = "id int, spend bigint, o_ts bigint"

CUSTOMER_360 = """
{{{{ config(merge_engine='partial_update', primary_key='id',
            sequence_groups={{'p_ts': ['name', 'city'], 'o_ts': ['spend']}}{extra}) }}}}
SELECT id, name, city, p_ts, CAST(NULL AS BIGINT) AS spend, CAST(NULL AS BIGINT) AS o_ts
FROM {{{{ source('src', 'profiles') }}}}
UNION ALL
SELECT id, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(NULL AS BIGINT), spend, o_ts
FROM {{{{ source('src', 'orders') }}}}
"""
SEGMENT_TOTALS = """
{{ config(merge_engine='aggregation', primary_key='city',
          aggregates={'spend': 'sum', 'customers': 'sum'}) }}
SELECT city, spend, CAST(1 AS BIGINT) AS customers FROM {{ ref('customer_360') }}
WHERE city IS NOT NULL
"""
INITIAL_TOTALS = """
{{ config(merge_engine='aggregation', primary_key='initial',
          aggregates={'spend': 'sum', 'customers': 'sum'}) }}
SELECT SUBSTRING(city, 1, 1) AS initial, spend, customers FROM {{ ref('segment_totals') }}
"""
CUSTOMER_HISTORY = """
{{ config(materialized='snapshot', unique_key='id', strategy='check', check_cols=['city']) }}
SELECT id, city FROM {{ ref('customer_360') }}
"""
CUSTOMER_COUNT = "SELECT COUNT(*) AS n, SUM(spend) AS spend FROM {{ ref('customer_360') }}"
NO_NEGATIVE_SPEND = "SELECT id, spend FROM {{ ref('customer_360') }} WHERE spend < 0"


# ------------------------------------------------------------------ the plain-Python oracle
def fold_customers(
    profiles: list[tuple], orders: list[tuple], tier: bool = False
) -> dict[int, tuple]:
    """partial_update with two sequence groups: per key and group, the record with the largest
    group sequence (ties: the later arrival) sets every column of the group. ``tier``: the
    model also reads the profiles' ``tier`` (the fifth field; NULL in rows written before the
    source had it), a column in no group: the last non-NULL value in arrival order."""
    groups: dict[int, dict[str, tuple]] = {}
    tiers: dict[int, str] = {}
    for source, rows, at in (("p", profiles, 3), ("o", orders, 2)):
        for row in rows:
            seen = groups.setdefault(row[0], {})
            if source not in seen or row[at] >= seen[source][at]:
                seen[source] = row
            if source == "p" and len(row) > 4 and row[4] is not None:
                tiers[row[0]] = row[4]
    out = {}
    for key, seen in groups.items():
        _, name, city, p_ts = seen.get("p", (key, None, None, None))[:4]
        _, spend, o_ts = seen.get("o", (key, None, None))
        out[key] = (key, name, city, p_ts, spend, o_ts) + ((tiers.get(key),) if tier else ())
    return out


def sum_by(rows: list[tuple[Any, int | None, int]]) -> list[tuple]:
    """aggregation with sum: per key, the sum of the non-NULL values (NULL when none)."""
    out: dict[Any, list] = {}
    for key, spend, customers in rows:
        total = out.setdefault(key, [key, None, 0])
        if spend is not None:
            total[1] = spend if total[1] is None else total[1] + spend
        total[2] += customers
    return sorted((tuple(r) for r in out.values()), key=null_first)


def segments(customers: dict[int, tuple]) -> list[tuple]:
    return sum_by([(c[2], c[4], 1) for c in customers.values() if c[2] is not None])


def initials(customers: dict[int, tuple]) -> list[tuple]:
    return sum_by([(city[0], spend, n) for city, spend, n in segments(customers)])


@dataclass
class Sources:
    """The sources' rows so far, and the customers as each run left them (snapshots)."""

    profiles: list[tuple] = field(default_factory=list)
    orders: list[tuple] = field(default_factory=list)
    runs: list[dict[int, tuple]] = field(default_factory=list)  # customers after each run
    tier: bool = False  # customer_360 reads the profiles' tier (a column added in place)

    def customers(self) -> dict[int, tuple]:
        return fold_customers(self.profiles, self.orders, self.tier)


def history(runs: list[dict[int, tuple]]) -> list[tuple]:
    """SCD2 of each customer's city (check strategy) as the runs saw it: (id, city, current)."""
    out: list[tuple] = []
    last: dict[int, Any] = {}
    for state in runs:
        for key, row in state.items():
            if key not in last or last[key] != row[2]:
                out = [(k, c, False) if k == key else (k, c, now) for k, c, now in out]
                out.append((key, row[2], True))
                last[key] = row[2]
    return sorted(out, key=null_first)


# ------------------------------------------------------------------ the project
@dataclass
class Chain:
    """One chain of models: its files and each model's rows computed from the sources."""

    models: dict[str, str]
    expected: dict[str, Callable[[Sources], list[tuple]]]
    seeds: bool = False  # profiles is a seed (seeds/profiles.csv) read by the models


def customer_rows(s: Sources) -> list[tuple]:
    return sorted(s.customers().values(), key=null_first)


def count_rows(s: Sources) -> list[tuple]:
    customers = s.customers().values()
    spends = [c[4] for c in customers if c[4] is not None]
    return [(len(customers), sum(spends) if spends else None)]


CHAINS = {
    "aggregation_over_partial_update": Chain(
        {"customer_360": CUSTOMER_360.format(extra=""), "segment_totals": SEGMENT_TOTALS},
        {"customer_360": customer_rows, "segment_totals": lambda s: segments(s.customers())},
    ),
    "aggregation_over_aggregation": Chain(
        {
            "customer_360": CUSTOMER_360.format(extra=""),
            "segment_totals": SEGMENT_TOTALS,
            "initial_totals": INITIAL_TOTALS,
        },
        {
            "customer_360": customer_rows,
            "segment_totals": lambda s: segments(s.customers()),
            "initial_totals": lambda s: initials(s.customers()),
        },
    ),
    "snapshot_of_a_key_table": Chain(
        {"customer_360": CUSTOMER_360.format(extra=""), "customer_history": CUSTOMER_HISTORY},
        {"customer_360": customer_rows, "customer_history": lambda s: history(s.runs)},
    ),
    "changelog_table_to_a_table": Chain(
        {
            "customer_360": CUSTOMER_360.format(extra=", changelog_producer='lookup'"),
            "customer_count": CUSTOMER_COUNT,
        },
        {"customer_360": customer_rows, "customer_count": count_rows},
    ),
    "seed_read_by_chained_key_tables": Chain(
        {"customer_360": CUSTOMER_360.format(extra=""), "segment_totals": SEGMENT_TOTALS},
        {"customer_360": customer_rows, "segment_totals": lambda s: segments(s.customers())},
        seeds=True,
    ),
}


@dataclass
class Project:
    root: Path
    spark: Any
    warehouse: Path
    namespace: str
    src: str
    chain: Chain
    sources: Sources = field(default_factory=Sources)

    def add(self, profiles: list[tuple], orders: list[tuple]) -> None:
        """Append rows to the sources (profiles to the seed's CSV when it is a seed: loaded
        by the next ``lakewide seed``)."""
        for table, rows, schema in (("profiles", profiles, PROFILES), ("orders", orders, ORDERS)):
            if not rows:
                continue
            if table == "profiles" and len(rows[0]) == 5:
                schema = f"{PROFILES}, {TIER}"
            if table == "profiles" and self.chain.seeds:
                csv = self.root / "seeds" / "profiles.csv"
                if not csv.exists():
                    csv.write_text("id,name,city,p_ts\n")
                with csv.open("a") as out:
                    out.writelines(",".join(str(v) for v in row) + "\n" for row in rows)
            else:
                name = f"lw.{self.src}.{table}"
                exists = self.spark.catalog.tableExists(name)
                write_rows(self.spark, name, schema, rows, create=not exists)
        self.sources.profiles.extend(profiles)
        self.sources.orders.extend(orders)

    def ran(self) -> None:
        """Record the customers as a run just left them (for the snapshot's oracle)."""
        self.sources.runs.append(self.sources.customers())

    def rows(self, model: str, branch: str | None = None) -> list[tuple]:
        table = f"lw.{self.namespace}.{model}"
        self.spark.catalog.refreshTable(table)
        frame = self.spark.table(table if branch is None else f"{table}.branch_{branch}")
        if model == "customer_history":
            frame = frame.selectExpr("id", "city", "dbt_valid_to IS NULL")
        columns = [c for c in frame.columns if not c.startswith("__lw_")]
        return sorted((tuple(r) for r in frame.select(*columns).collect()), key=null_first)

    def check(self, branch: str | None = None, *models: str) -> None:
        for model, expected in self.chain.expected.items():
            if not models or model in models:
                assert self.rows(model, branch) == expected(self.sources), (model, branch)

    def tables(self) -> list[Relation]:
        out = []
        for model in self.chain.models:
            relation = Relation("lw", self.namespace, model)
            out += [relation, changelog_relation(relation)]
        return out

    def heads(self, branch: str = "main") -> dict[str, int | None]:
        """Each model table's (and changelog table's) head on ``branch``, from its metadata."""
        heads = {}
        for relation in self.tables():
            meta = read_table_meta(self.warehouse, relation)
            if meta is not None:
                heads[relation.name] = meta.branches.get(branch)
        return heads

    def behind_changelogs(self, branch: str) -> list[str]:
        """The models whose table on ``branch`` holds MERGE commits its changelog lacks."""
        behind = []
        for model in self.chain.models:
            relation = Relation("lw", self.namespace, model)
            meta = read_table_meta(self.warehouse, relation)
            changes = read_table_meta(self.warehouse, changelog_relation(relation))
            if meta is None or changes is None or branch not in meta.branches:
                continue
            if missing_changes(on_branch(meta, branch), changes):
                behind.append(model)
        return behind


def make_project(tmp_path: Path, spark: Any, warehouse: Path, chain: Chain) -> Project:
    n = next(_counter)
    namespace, src = f"bc{n}_prod", f"bc{n}_src"
    root = tmp_path / "project"
    hadoop_project(root, warehouse, namespace)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + f'seed-schema = "{src}"\n')
    (root / "models" / "sources.yml").write_text(
        f"sources:\n  - name: src\n    schema: {src}\n    tables:\n"
        "      - name: profiles\n      - name: orders\n"
    )
    for name, sql in chain.models.items():
        (root / "models" / f"{name}.sql").write_text(sql)
    if chain.seeds:
        (root / "seeds").mkdir()
    return Project(root, spark, warehouse, namespace, src, chain)


def add_tier(model: Path) -> None:
    """Edit customer_360's file as a user would: its profiles branch reads ``tier``."""
    sql = model.read_text()
    edited = sql.replace("AS o_ts\nFROM", "AS o_ts, tier\nFROM", 1).replace(
        "spend, o_ts\nFROM", "spend, o_ts, CAST(NULL AS STRING)\nFROM", 1
    )
    assert edited.count("tier") == 1 and "o_ts, CAST(NULL AS STRING)" in edited, edited
    model.write_text(edited)


def changed_tiers(spark: Any, changes: Relation, branch: str | None = None) -> set[tuple]:
    """(id, tier) of the rows in a changelog table (on ``branch``) with a tier."""
    table = str(changes) if branch is None else f"{changes}.branch_{branch}"
    spark.catalog.refreshTable(str(changes))
    rows = spark.table(table).where("tier IS NOT NULL").select("id", "tier").collect()
    return {tuple(r) for r in rows}


def contract_columns(p: Project, model: str, branch: str | None = None) -> dict[str, str]:
    """The columns of the contract stored with ``model``'s table for ``branch`` (its own keys,
    lakewide.contract@NAME; None: main's); {} when none."""
    meta = read_table_meta(p.warehouse, Relation("lw", p.namespace, model))
    assert meta is not None and meta.properties is not None
    text = meta.properties.get(line_key(CONTRACT, branch))
    return json.loads(text)["columns"] if text else {}


# ------------------------------------------------------------------ the tests
def test_newcomer_chain_on_a_branch_tested_repaired_and_published(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: Callable[..., tuple[int, str]],
    cli_on: Callable[..., tuple[int, str]],
) -> None:
    p = make_project(tmp_path, spark, warehouse, CHAINS["aggregation_over_partial_update"])
    (p.root / "data-tests").mkdir()
    (p.root / "data-tests" / "no_negative_spend.sql").write_text(NO_NEGATIVE_SPEND)
    p.add(
        [(1, "Ada", "paris", 1), (2, "Grace", "oslo", 1), (3, "Linus", "paris", 1)],
        [(1, 10, 1), (2, 20, 1), (3, 30, 1)],
    )
    code, output = cli(p.root, "build")
    assert code == 0, output
    p.check()
    production, seen_by_production = p.heads(), {m: p.rows(m) for m in p.chain.models}
    assert "customer_360__changelog" in production  # kept for the aggregation downstream

    # new rows on the branch: a negative spend the data test refuses, a customer moving city
    p.add([(3, "Linus", "oslo", 2), (4, "Ken", "rome", 1)], [(2, -5, 2), (4, 7, 1)])
    # the first branch run is killed between customer_360's MERGE and its changelog append:
    # the MERGE went to the model's staging side branch, so its branch dev is not ahead of its
    # changelog table (nothing of the run is on dev)
    staged = ("customer_360", "customer_360__changelog")
    killed = killed_at(p.root, "before-changelog", "build", "--branch", "dev")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert p.behind_changelogs("dev") == []
    assert {t: p.heads("dev")[t] for t in staged} == {t: production[t] for t in staged}
    assert p.heads() == production
    # the second is killed after the append, before the model's branch moved to the MERGE:
    # the changelog table is ahead, never the model's table
    killed = killed_at(p.root, "after-changelog", "build", "--branch", "dev")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert p.behind_changelogs("dev") == []
    dev = p.heads("dev")
    assert dev["customer_360"] == production["customer_360"]
    assert dev["customer_360__changelog"] != production["customer_360__changelog"]
    assert p.heads() == production

    # the retry settles the model on its staged MERGE first; the failing data test skips the
    # aggregation
    code, output = cli(p.root, "build", "--branch", "dev")
    assert code == 1 and "no_negative_spend" in output, output
    assert "Cannot override ref" not in output, output
    assert p.behind_changelogs("dev") == []
    p.check("dev", "customer_360")
    assert p.heads() == production
    assert {m: p.rows(m) for m in p.chain.models} == seen_by_production
    code, output = cli(p.root, "branch", "list")
    assert code == 0 and "customer_360__changelog" in output, output

    # the aggregation, skipped, has no branch yet: publish names the run that makes it
    code, output = cli(p.root, "publish", "--branch", "dev")
    said = " ".join(output.split())
    assert code == 2 and "lakewide run --branch dev -s segment_totals" in said, output
    code, output = cli(p.root, "publish", "--branch", "dev", "-s", "customer_360")
    assert code == 1 and "data test(s) failed on branch dev" in output, output
    assert p.heads() == production

    # the fix arrives in the source; `run -s segment_totals` alone works on the branch too
    p.add([], [(2, 25, 3)])
    code, output = cli(p.root, "run", "--branch", "dev", "-s", "customer_360")
    assert code == 0, output
    code, output = cli(p.root, "run", "--branch", "dev", "-s", "segment_totals")
    assert code == 0, output
    p.check("dev")
    assert p.heads() == production
    branch_heads = p.heads("dev")

    code, output = cli(p.root, "publish", "--branch", "dev")
    assert code == 0 and "3 table(s) fast-forwarded" in output, output
    assert p.heads() == branch_heads
    p.check()

    # production continues exactly-once from the published offsets
    p.add([(5, "Barbara", "paris", 1), (1, "Ada", "rome", 3)], [(5, 1, 1), (3, 4, 5)])
    code, output = cli(p.root, "run")
    assert code == 0, output
    p.check()

    # a new column in place on a branch: profiles gains `tier` (older rows read NULL), which
    # production consumes without reading it; then customer_360 reads it, a column in no
    # sequence group: the branch run re-reads profiles in full, its changelog table follows
    spark.sql(f"ALTER TABLE lw.{p.src}.profiles ADD COLUMN {TIER}")
    p.add([(2, "Grace", "oslo", 4, "gold"), (6, "Edsger", "rome", 1, "silver")], [(6, 12, 1)])
    code, output = cli(p.root, "run")
    assert code == 0, output
    p.check()
    p.add([(2, "Grace", "paris", 5, "platinum"), (6, "Edsger", "oslo", 2, None)], [])
    add_tier(p.root / "models" / "customer_360.sql")
    production, seen_by_production = p.heads(), {m: p.rows(m) for m in p.chain.models}
    p.sources.tier = True
    code, output = cli(p.root, "build", "--branch", "tier")
    said = " ".join(output.split())
    assert code == 0 and f"column tier of source lw.{p.src}.profiles" in said, output
    p.check("tier")
    changes = changelog_relation(Relation("lw", p.namespace, "customer_360"))
    tiers = {(c[0], c[-1]) for c in p.sources.customers().values() if c[-1] is not None}
    assert changed_tiers(spark, changes, "tier") == tiers
    # main's rows unchanged: an ALTER is table-wide, main's readers see the column as NULL
    assert p.heads() == production
    assert p.rows("customer_360") == [r + (None,) for r in seen_by_production["customer_360"]]
    assert p.rows("segment_totals") == seen_by_production["segment_totals"]
    assert changed_tiers(spark, changes) == set()
    # the contract with the column is the branch's until publish makes it main's
    assert "tier" not in contract_columns(p, "customer_360")
    assert "tier" in contract_columns(p, "customer_360", "tier")
    branch_heads = p.heads("tier")
    code, output = cli(p.root, "publish", "--branch", "tier")
    assert code == 0, output
    assert p.heads() == branch_heads
    assert "tier" in contract_columns(p, "customer_360")
    assert contract_columns(p, "customer_360", "tier") == {}
    p.check()
    p.add([(3, "Linus", "oslo", 6, "gold")], [(6, 3, 2)])  # production continues with it
    code, output = cli(p.root, "run")
    assert code == 0, output
    p.check()

    # Iceberg's refusal on a branch comes with what happened and what to do: a profile that
    # sets spark.wap.branch itself, on a table with write.wap.enabled (as older runs left it)
    spark.sql(
        f"ALTER TABLE lw.{p.namespace}.customer_360 SET TBLPROPERTIES "
        "('write.wap.enabled' = 'true')"
    )
    profiles = p.root / "profiles.yml"
    profiles.write_text(profiles.read_text() + "      spark_conf:\n        spark.wap.branch: dev\n")
    p.add([], [(1, 2, 9)])
    # in-process on a session of its own holding the setting, as the profile gives a process
    wap = spark.newSession()
    wap.conf.set("spark.wap.branch", "dev")
    code, output = cli_on(wap, p.root, "run", "--branch", "dev", "-s", "customer_360")
    said = " ".join(output.split())
    assert code == 1, said
    assert "Remove spark.wap.branch from the profile" in said, said
    assert "\tat org.apache" not in output  # no Java trace


#: every chain but aggregation_over_partial_update: its two models are aggregation_over_aggregation's
#: first two, with the same checks (and the newcomer test above runs it through a branch)
BRANCH_CHAINS = [name for name in CHAINS if name != "aggregation_over_partial_update"]


@pytest.mark.slow
@pytest.mark.parametrize("name", BRANCH_CHAINS)
def test_every_chain_builds_on_a_branch_and_publishes(
    tmp_path: Path,
    spark: Any,
    warehouse: Path,
    cli: Callable[..., tuple[int, str]],
    name: str,
) -> None:
    p = make_project(tmp_path, spark, warehouse, CHAINS[name])

    def build(*args: str) -> None:
        if p.chain.seeds and "--branch" not in args:
            code, output = cli(p.root, "seed")
            assert code == 0, output
        code, output = cli(p.root, "build", *args)
        assert code == 0, output
        p.ran()

    p.add(
        [(1, "Ada", "paris", 1), (2, "Grace", "oslo", 1), (3, "Linus", "paris", 1)],
        [(1, 10, 1), (2, 20, 1), (3, 30, 1)],
    )
    build()
    p.check()
    production, seen_by_production = p.heads(), {m: p.rows(m) for m in p.chain.models}

    p.add([(3, "Linus", "oslo", 2), (4, "Ken", "rome", 1)], [(2, 5, 2), (4, 7, 1), (1, 3, 0)])
    if p.chain.seeds:  # seeds are production's: loaded on main, read on the branch
        code, output = cli(p.root, "seed")
        assert code == 0, output
    build("--branch", "dev")
    p.check("dev")
    assert p.heads() == production
    assert {m: p.rows(m) for m in p.chain.models} == seen_by_production

    code, output = cli(p.root, "publish", "--branch", "dev")
    assert code == 0, output
    p.check()

    p.add([(2, "Grace", "paris", 3)], [(3, 1, 4), (5, 2, 1)])
    build()
    p.check()


def test_production_run_of_a_model_changed_on_a_branch_reads_mains_contract(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """A branch build of a model gaining a column stores its contract for the branch only:
    production running the edited model before publish still finds the column new on main
    and re-reads the source, so main's rows carry it (the contract was once table-wide, and
    main's rows kept the column NULL)."""
    p = make_project(tmp_path, spark, warehouse, CHAINS["aggregation_over_partial_update"])
    p.add([(1, "Ada", "paris", 1, "gold"), (2, "Grace", "oslo", 1, None)], [(1, 10, 1)])
    code, output = cli(p.root, "build", "-s", "customer_360")
    assert code == 0, output
    p.check(None, "customer_360")

    add_tier(p.root / "models" / "customer_360.sql")
    p.sources.tier = True
    code, output = cli(p.root, "build", "--branch", "dev", "-s", "customer_360")
    assert code == 0, output
    p.check("dev", "customer_360")
    code, output = cli(p.root, "run", "-s", "customer_360")  # production, on main
    assert code == 0, output
    p.check(None, "customer_360")
    p.check("dev", "customer_360")
    # a branch of that name made again reads main's contract, not the dropped branch's
    assert "tier" in contract_columns(p, "customer_360", "dev")
    code, output = cli(p.root, "branch", "drop", "dev", "-s", "customer_360")
    assert code == 0, output
    assert contract_columns(p, "customer_360", "dev") == {}

"""A key table's contract per branch line (lakewide.state.contract_store), where a run or a
publish stopped half-way, or a branch went away outside lakewide, could leave the keys of a
line wrong; on real Spark + Iceberg, each table checked against the plain-Python oracle of
lakewide's own branch tests.

customer_360 alone (no key table downstream, so no changelog table: its main moves in one
fast-forward) is built on main, then edited on branch ``dev`` to read the profiles' ``tier``:
the branch's contract, with the column, is under the branch's keys (``lakewide.contract@dev``).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakewide.compiler.schema.contract import CONTRACT, line_key
from lakewide.project.nodes import Relation
from lakewide.state.metadata import read_table_meta
from tests.integration.test_branch_chains import (
    CUSTOMER_360,
    Chain,
    Project,
    add_tier,
    contract_columns,
    customer_rows,
    make_project,
)
from tests.support.killed_process import killed_at

pytestmark = [pytest.mark.spark]

ALONE = Chain({"customer_360": CUSTOMER_360.format(extra="")}, {"customer_360": customer_rows})
MODEL = "customer_360"
# what a run taking ``tier`` in says of the profiles (the model's own plan: the schema check
# before the run reads the keys of the line as they are before the run remakes the branch)
READ_AGAIN = "is read again in full"


def contract_text(p: Project, branch: str | None = None) -> str | None:
    """The contract stored with customer_360's table for ``branch`` (None: main's), as stored."""
    meta = read_table_meta(p.warehouse, Relation("lw", p.namespace, MODEL))
    assert meta is not None and meta.properties is not None
    return meta.properties.get(line_key(CONTRACT, branch)) or None


def tier_on_a_branch(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> Project:
    """customer_360 built on main, then edited to read ``tier`` and run on branch ``dev``."""
    p = make_project(tmp_path, spark, warehouse, ALONE)
    p.add([(1, "Ada", "paris", 1, "gold"), (2, "Grace", "oslo", 1, None)], [(1, 10, 1)])
    code, output = cli(p.root, "build")
    assert code == 0, output
    p.check()
    add_tier(p.root / "models" / f"{MODEL}.sql")
    p.sources.tier = True
    code, output = cli(p.root, "run", "--branch", "dev")
    assert code == 0 and f"schema changes of {MODEL}" in output, output
    p.check("dev")
    assert "tier" not in contract_columns(p, MODEL)
    assert "tier" in contract_columns(p, MODEL, "dev")
    return p


def killed_publish(p: Project) -> str | None:
    """``publish --branch dev`` killed after customer_360's main moved to the branch's head,
    before the branch's contract was copied to main's keys; the branch's contract."""
    contract, dev = contract_text(p, "dev"), p.heads("dev")
    killed = killed_at(p.root, "after-forward", "publish", "--branch", "dev")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    check_forwarded(p, dev, contract)
    return contract


def check_forwarded(p: Project, dev: dict[str, int | None], contract: str | None) -> None:
    """main at dev's heads (``dev``), dev's contract still ``contract``, main's without tier."""
    assert p.heads() == dev  # main moved
    assert "tier" not in contract_columns(p, MODEL)  # its contract did not
    assert contract_text(p, "dev") == contract


def test_publish_killed_before_the_contract_copy_completes_it_when_run_again(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """The next publish finds main on the branch's head already ("up to date") and still
    makes the branch's contract main's, so production then reads the branch's contract: no
    schema change planned again (without the copy, production would take ``tier`` for new
    and re-read the profiles in full)."""
    p = tier_on_a_branch(tmp_path, spark, warehouse, cli)
    contract = killed_publish(p)

    code, output = cli(p.root, "publish", "--branch", "dev")
    assert code == 0, output
    assert contract_text(p) == contract
    assert contract_text(p, "dev") is None
    p.check()

    p.add([(3, "Linus", "rome", 1, "silver"), (2, "Grace", "oslo", 2, "gold")], [(3, 5, 1)])
    code, output = cli(p.root, "run")
    assert code == 0, output
    assert "schema changes" not in output and READ_AGAIN not in output, output
    assert contract_text(p) == contract
    p.check()


def test_a_branch_remade_after_a_drop_outside_lakewide_clears_its_stale_contract(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """Branch dev dropped outside lakewide (Spark SQL's DROP BRANCH) leaves its
    contract keys; a run on dev makes the branch again at main's head, empties them, and
    analyses the model against main's contract: it takes ``tier`` in, re-reading the
    profiles (with the stale keys it would find nothing changed and leave ``tier`` NULL)."""
    p = tier_on_a_branch(tmp_path, spark, warehouse, cli)
    spark.sql(f"ALTER TABLE lw.{p.namespace}.{MODEL} DROP BRANCH dev")
    assert "tier" in contract_columns(p, MODEL, "dev")  # stale

    code, output = cli(p.root, "run", "--branch", "dev")
    assert code == 0 and READ_AGAIN in output, output
    p.check("dev")
    assert "tier" in contract_columns(p, MODEL, "dev")  # recorded by the run, for dev
    assert "tier" not in contract_columns(p, MODEL)


def forwarded_without_the_contract(p: Project, spark: Any) -> None:
    """customer_360's main moved to dev's head by Iceberg's own ``fast_forward``, the
    contract left as it was: where ``killed_publish`` leaves them (the same checks), in
    this process."""
    contract, dev = contract_text(p, "dev"), p.heads("dev")
    table = f"{p.namespace}.{MODEL}"
    spark.sql(f"CALL lw.system.fast_forward(table => '{table}', branch => 'main', to => 'dev')")
    check_forwarded(p, dev, contract)


def test_a_branch_moved_to_mains_head_clears_its_stale_contract(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """A publish killed before its contract copy leaves dev's keys (here: main forwarded as
    that publish leaves it; the test above kills one); production then runs on
    without ``tier`` (the edit reverted on main), so dev is behind main. The next run on dev
    moves the branch to main's head and empties its keys: it analyses the model against
    main's contract, takes ``tier`` in again and re-reads the profiles (with the stale keys
    it would find nothing changed, and the profile production merged keep ``tier`` NULL)."""
    p = tier_on_a_branch(tmp_path, spark, warehouse, cli)
    forwarded_without_the_contract(p, spark)
    model = p.root / "models" / f"{MODEL}.sql"
    edited = model.read_text()
    model.write_text(CUSTOMER_360.format(extra=""))
    p.add([(4, "Ken", "rome", 1, "silver")], [(4, 7, 1)])
    code, output = cli(p.root, "run")
    assert code == 0 and "schema changes" not in output, output
    assert p.heads("dev") != p.heads()

    model.write_text(edited)
    code, output = cli(p.root, "run", "--branch", "dev")
    assert code == 0 and READ_AGAIN in output, output
    assert p.heads("dev") != p.heads()
    p.check("dev")
    assert "tier" in contract_columns(p, MODEL, "dev")

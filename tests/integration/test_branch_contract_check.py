"""The schema check before a run on a branch (``run --dry-run``, and the check before the run
writes) plans from the contract the run will plan from: main's where the run makes the table's
branch at main's head or moves it there (lakewide.state.branches.made_at_main, whose cases
tests/state/test_branch_state.py covers), not the keys an earlier branch of that name left.

The stale keys come from lakewide's own branch tests (tests/integration/test_branch_contracts.py):
customer_360 edited on branch ``dev`` to read ``tier``, then dev dropped outside lakewide.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_branch_chains import contract_columns
from tests.integration.test_branch_contracts import MODEL, READ_AGAIN, tier_on_a_branch

pytestmark = [pytest.mark.spark]

PLANNED = f"schema changes of {MODEL}"


def test_dry_run_on_a_dropped_branch_plans_from_mains_contract(
    tmp_path: Path, spark: Any, warehouse: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """dev dropped outside lakewide: its keys (with ``tier``) are stale. ``run --branch dev
    --dry-run`` says the change the run makes (``tier`` added, the profiles read again), as
    the run then does; with the stale keys it said nothing would change."""
    p = tier_on_a_branch(tmp_path, spark, warehouse, cli)
    spark.sql(f"ALTER TABLE lw.{p.namespace}.{MODEL} DROP BRANCH dev")
    assert "tier" in contract_columns(p, MODEL, "dev")  # stale

    code, output = cli(p.root, "run", "--branch", "dev", "--dry-run")
    assert code == 0 and PLANNED in output and "tier" in output, output
    code, output = cli(p.root, "run", "--branch", "dev")
    assert code == 0 and PLANNED in output and READ_AGAIN in output, output
    p.check("dev")

"""The peers benchmark at a tiny size: it runs, and every peer's table equals lakewide's.

benchmarks/peers.py in its own process (the peers' jars must be on the session's classpath
from its start): lakewide, the JOIN rebuild, Iceberg and Delta MERGEs by hand and a Paimon
partial-update table, one step of each kind. Opt-in (LAKEWIDE_PEERS_TEST=1): it takes longer
than CI's budget allows (docs/benchmarks.md, "Against peers").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("LAKEWIDE_PEERS_TEST") != "1",
        reason="opt-in: LAKEWIDE_PEERS_TEST=1 (Delta's and Paimon's jars from Maven Central)",
    ),
]


def test_peers_agree_with_lakewide(tmp_path: Path) -> None:
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "peers.py"), "--keys", "2000"]
        + [
            "--steps",
            "one",
            "all",
            "clustered",
            "--out",
            str(tmp_path),
            "--results",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": pythonpath},
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "peers_2k.json").read_text())
    peers = {"lakewide", "iceberg_merge", "iceberg_merge_mor", "delta_merge", "delta_merge_dv"}
    assert set(result["systems"]) == {"join", "paimon"} | peers
    steps = list(result["steps"])
    assert len(steps) == 5 and steps[-1] == "read the finished table once", steps
    for step, diffs in result["differing_keys"].items():
        assert diffs == dict.fromkeys(peers | {"paimon"}, 0), step
    for step, times in result["steps"].items():
        assert all(t["cpu"] > 0 and t["s"] > 0 for t in times.values()), (step, times)
    assert "| lakewide |" in (tmp_path / "peers_2k.md").read_text()

"""The peers benchmark at a tiny size: it runs, and every peer's table equals lakewide's except
where the peer's semantics differ (dbt-spark's merge of the JOIN, counted).

benchmarks/peers.py in its own process (the peers' jars must be on the session's classpath
from its start) with ``--quick``: lakewide, the JOIN rebuild, Iceberg and Delta MERGEs by hand,
a Paimon partial-update table and, where dbt-spark is installed (the ``bench`` extra; else the
benchmark says it skips it), dbt-spark's incremental merge model; the steps: one source
changed, then late records, each followed by a read of every table, then each system's own
maintenance (still equal) and one more read. benchmarks/peer_phases.py (lakewide against the hand-written
merge-on-read Iceberg MERGE, by plan step kind) the same way. ``LAKEWIDE_PEERS_PYTHON``
chooses the interpreter (one with the ``bench`` extra). Opt-in (LAKEWIDE_PEERS_TEST=1: Maven
Central, 2-4 min), which .ci/run sets (docs/benchmarks/peers.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAME = {
    "lakewide",
    "iceberg_merge",
    "iceberg_merge_mor",
    "delta_merge",
    "delta_merge_dv",
    "paimon",
    "paimon_dv",
    "paimon_lookup",
}

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("LAKEWIDE_PEERS_TEST") != "1",
        reason="opt-in: LAKEWIDE_PEERS_TEST=1 (Delta's and Paimon's jars from Maven Central)",
    ),
]


def _bench(
    script: str, tmp_path: Path, *args: str, steps: tuple[str, ...] = ("one", "late")
) -> subprocess.CompletedProcess[str]:
    """``benchmarks/<script>`` on 1,000 keys, ``--quick``, ``steps``; must succeed."""
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    python = os.environ.get("LAKEWIDE_PEERS_PYTHON", sys.executable)
    done = subprocess.run(
        [python, str(REPO / "benchmarks" / script), "--keys", "1000", "--quick", *args]
        + ["--steps", *steps, "--out", str(tmp_path), "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": pythonpath},
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def test_peer_phases_time_lakewide_by_step_kind(tmp_path: Path) -> None:
    """benchmarks/peer_phases.py: the three tables agree after every step, the deletes step
    included (else it fails), and lakewide's run is timed by plan step kind, its MERGE
    statement within the Commit."""
    wide = "iceberg_merge_mor_pruned_wide"  # lakewide's versions stored, the source by k = k
    _bench(
        "peer_phases.py",
        tmp_path,
        *("--warmup", "0", "--rounds", "1", "--systems", wide),
        steps=("one", "late", "deletes"),
    )
    result = json.loads((tmp_path / "peer_phases_1k.json").read_text())
    assert result["systems"] == ["lakewide", "iceberg_merge_mor", wide]
    *_, one, late, deletes = result["steps"].values()
    for [entry] in (one, late, deletes):
        assert set(entry["differing_keys"].values()) == {0}, entry
        steps = entry["lakewide_steps"]
        assert {"Read", "Stage", "Commit", "MERGE statement"} <= set(steps), steps
        assert 0 < steps["MERGE statement"]["s"] <= steps["Commit"]["s"], steps
        assert entry[f"{wide}_steps"]["new rows' view"]["n"] == 1, entry
    assert "| Stage | 1 |" in (tmp_path / "peer_phases_1k.md").read_text()


def test_peers_agree_with_lakewide(tmp_path: Path) -> None:
    done = _bench("peers.py", tmp_path)
    result = json.loads((tmp_path / "peers_1k.json").read_text())
    dbt = "dbt_spark" in result["systems"]
    assert dbt or "dbt-spark is not installed" in done.stdout, done.stdout[-3000:]
    assert set(result["systems"]) == {"join"} | SAME | ({"dbt_spark"} if dbt else set())
    steps = list(result["steps"])
    assert steps[3:] == [
        "read the finished table once",
        "each system's recommended maintenance",
        "read the finished table after that maintenance",
    ], steps
    one, late = steps[1], steps[2]
    assert late.startswith("late records"), steps
    assert list(result["reads"]) == steps[:3], result["reads"]  # a read after every write
    assert result["steps"][steps[3]] == result["reads"][late]
    diffs = result["differing_keys"]
    assert list(diffs) == [*steps[:3], steps[4]]  # compared after each write and maintenance
    for step in diffs:
        assert {s: diffs[step][s] for s in SAME} == dict.fromkeys(SAME, 0), step
    if dbt:  # the merge of the JOIN: NULLs over the other sources' columns; late rows missed
        assert diffs[steps[0]]["dbt_spark"] == 0
        assert 0 < diffs[one]["dbt_spark"] < diffs[late]["dbt_spark"], diffs
    for step, times in [*result["steps"].items(), *result["reads"].items()]:
        acted = {s: t for s, t in times.items() if (s, step) != ("join", steps[4])}
        assert all(t["cpu"] > 0 and t["s"] > 0 for t in acted.values()), (step, times)
    report = (tmp_path / "peers_1k.md").read_text()
    assert "| lakewide |" in report
    assert f"| {late}, + 16 reads |" in report


def test_peers_delete_the_rows_a_cdc_log_deletes(tmp_path: Path) -> None:
    """The deletes step: 1% of the keys removed by a delete log's ``-D`` rows, in every system
    that reads it (dbt-spark's model has none, Paimon 0.9's lookup changelog fails on it: both
    said and left out); every table still equals lakewide's, which lost those rows."""
    done = _bench("peers.py", tmp_path, steps=("deletes",))
    assert "the paimon_lookup peer is skipped: " in done.stdout, done.stdout[-3000:]
    result = json.loads((tmp_path / "peers_1k.json").read_text())
    assert set(result["systems"]) == {"join"} | SAME - {"paimon_lookup"}, result["systems"]
    [bootstrap, deletes] = result["reads"]
    assert deletes.startswith("deletes"), deletes
    assert result["rows"][bootstrap] == 1000
    assert 0 < 1000 - result["rows"][deletes] < 30, result["rows"]  # 1% of the keys, spread
    for step, diffs in result["differing_keys"].items():
        assert set(diffs.values()) == {0}, (step, diffs)

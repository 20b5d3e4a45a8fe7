"""benchmarks/peer_report.py on the saved 1M peers results: the table's best peer is the cheapest
with lakewide's answer, and the chart marks the peer whose answer differs (no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import peer_report

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "peers_1m.json"


def _saved() -> dict[str, object]:
    return json.loads(RESULTS.read_text())


def test_best_peer_skips_a_peer_whose_answer_differs() -> None:
    result = _saved()
    step = "late records: 1% of keys in one source, older sequences"
    times = result["steps"][step]  # type: ignore[index]
    equal = [
        s
        for s in times
        if s not in peer_report.BASELINES and result["differing_keys"][step][s] == 0  # type: ignore[index]
    ]
    best = peer_report.best_peer(result, step, "cpu")  # type: ignore[arg-type]
    assert best == min(equal, key=lambda s: times[s]["cpu"])
    assert result["differing_keys"][step]["dbt_spark"] > 0  # type: ignore[index]
    assert best != "dbt_spark"


def test_chart_legend_says_which_peer_differs() -> None:
    result = _saved()
    labels = {s: peer_report.legend_label(result, s) for s in result["systems"]}  # type: ignore[attr-defined]
    assert labels["dbt_spark"] == "dbt_spark (answer differs)"
    assert all(labels[s] == s for s in labels if s != "dbt_spark"), labels


def test_chart_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "peers.png"
    said = peer_report.chart(_saved(), out)  # type: ignore[arg-type]
    assert said == f"chart: {out}"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


READS = RESULTS.with_name("peers_1m_reads.json")


def test_a_write_plus_its_reads_ranks_the_peers_by_the_sum() -> None:
    """The report's write-plus-N-reads rows: each system's write and N reads of the table
    after it, the best peer the cheapest such sum among the peers with lakewide's answer."""
    result = json.loads(READS.read_text())
    report = peer_report.markdown(result)
    for step, reads in result["reads"].items():
        writes = result["steps"][step]
        for n in peer_report.READS:
            sums = {s: writes[s]["cpu"] + n * reads[s]["cpu"] for s in writes}
            equal = [s for s in sums if s not in peer_report.BASELINES]
            equal = [s for s in equal if result["differing_keys"][step][s] == 0]
            best = min(equal, key=sums.__getitem__)
            label = f"{step}, + {n} read{'s' if n > 1 else ''}"
            [row] = [line for line in report.splitlines() if line.startswith(f"| {label} |")]
            assert row.endswith(f"| {best} |"), row
            cell = row.split(" | ")[1 + result["systems"].index("lakewide")]
            assert cell.startswith(f"{sums['lakewide']:.1f} ("), (cell, sums["lakewide"])

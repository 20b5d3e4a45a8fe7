"""One conservative type inference of CSV text, shared by seeds and unit-test CSV rows: a type
only when every non-empty value is in its canonical form (no JVM here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakewide.project.seeds import find_seeds
from lakewide.project.text_types import infer_text_type, text_kind
from lakewide.run.testing.unit_tests.values import infer_type
from tests.support.project_factory import make_project, manifest_of

# the values Spark's CSV inference mistypes, and what lakewide infers for them
COLUMNS = {
    "ticket_id": (["T1", "T2", "T3"], "string"),  # Spark: timestamp 01:00, 02:00, ...
    "code": (["1e5", "2e5", "3E7"], "string"),  # Spark: double 100000.0
    "zip": (["00123", "02134", "10001"], "string"),  # Spark: int 123
    "flag": (["true", "FALSE", "True"], "boolean"),
    "answer": (["true", "yes", "false"], "string"),
    "iso_day": (["2024-05-01", "2024-02-29"], "date"),
    "not_a_day": (["2024-05-01", "2024-02-30"], "string"),
    "us_day": (["05/01/2024", "12/31/2024"], "string"),
    "compact_day": (["20240501", "20241231"], "int"),  # canonical integers: a number
    "day_and_time": (["2024-05-01", "2024-05-01 10:00:00"], "timestamp"),
    "iso_t": (["2024-05-01T10:00:00.123", "2024-05-01 10:00"], "timestamp"),
    "zoned": (["2024-05-01T10:00:00Z", "2024-05-01T10:00:00+02:00"], "string"),
    "bad_hour": (["2024-05-01 24:00:00"], "string"),
    "ints": (["0", "-7", "42"], "int"),
    "big": (["1", "9999999999"], "bigint"),
    "too_big": (["99999999999999999999"], "string"),
    "amount": (["1", "2.5", "-0.75"], "double"),
    "half_written": (["1.", ".5"], "string"),
    "plus": (["+1"], "string"),
    "padded": ([" 1", "2"], "string"),
    "some_empty": (["", "3", ""], "int"),
    "all_empty": (["", ""], None),
}


@pytest.mark.parametrize(("values", "expected"), COLUMNS.values(), ids=COLUMNS.keys())
def test_inference_is_conservative(values: list[str], expected: str | None) -> None:
    assert infer_text_type(values) == expected


@given(st.lists(st.text(max_size=12), max_size=6))
def test_a_typed_column_holds_only_canonical_values(values: list[str]) -> None:
    """Whatever the values, a non-string type means each value is in a form of that type."""
    found = infer_text_type(values)
    kinds = {text_kind(v) for v in values if v}
    if found not in (None, "string"):
        assert "string" not in kinds
    if "string" in kinds:
        assert found == "string"


def test_seeds_and_unit_test_csv_rows_share_one_inference(tmp_path: Path) -> None:
    """A seed's inferred types are the ones a unit test's CSV rows get for the same values."""
    names = list(COLUMNS)
    depth = max(len(v) for v, _ in COLUMNS.values())
    rows = [
        [COLUMNS[n][0][i] if i < len(COLUMNS[n][0]) else "" for n in names] for i in range(depth)
    ]
    text = ",".join(names) + "\n" + "".join(",".join(r) + "\n" for r in rows)
    root = make_project(tmp_path, {"seeds/odd.csv": text})
    manifest = manifest_of(root)
    [seed] = find_seeds(manifest.project, manifest.output)
    for i, name in enumerate(names):
        unit = infer_type([r[i] or None for r in rows], True) or "string"
        assert seed.types[name] == unit == (COLUMNS[name][1] or "string"), name

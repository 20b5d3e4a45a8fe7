"""Bad ``unit_tests:`` are refused before Spark starts: exit 2, the file and the key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.run.testing.unit_tests.inputs import declared_types
from tests.run.testing.unit_tests.projects import GROUPS_MODEL, SOURCES
from tests.support.project_factory import make_project, manifest_of, run_main

TABLE_MODEL = (
    "{{ config(materialized='table') }}\nSELECT k, COUNT(*) AS n FROM {{ ref('m') }} GROUP BY k\n"
)


def _test(body: str) -> str:
    return "unit_tests:\n  - name: t\n" + body


GOOD_EXPECT = "    expect:\n      rows:\n        - {k: 1}\n"


@pytest.mark.parametrize(
    ("tests", "expected"),
    [
        (
            _test("    model: nope\n" + GOOD_EXPECT),
            "[unit_tests[0].model] unit test 't' names no model 'nope'; models: counts, m",
        ),
        (
            _test(
                "    model: m\n    given:\n      - input: source('src', 'other')\n        rows: []\n"
                + GOOD_EXPECT
            ),
            "[unit_tests[0].given[0].input] input \"source('src', 'other')\" is not an input of "
            "model m; its inputs: source('src', 's1'), source('src', 's2'), this",
        ),
        (
            _test("    model: m\n    given:\n      - input: m\n" + GOOD_EXPECT),
            "[unit_tests[0].given[0].input] input 'm' is not ref('model'), source('source', "
            "'table') or this",
        ),
        (
            _test("    model: counts\n    given:\n      - input: this\n" + GOOD_EXPECT),
            "[unit_tests[0].given[0].input] input 'this' is not an input of model counts; its "
            "inputs: ref('m') (`this` is for key tables: set merge_engine)",
        ),
        (
            _test(
                "    model: m\n    given:\n      - input: source('src', 's1')\n        rows:\n"
                "          - {k: one}\n" + GOOD_EXPECT
            ),
            "[unit_tests[0].given[0].rows[0].k] value 'one' is not a valid bigint (the type of "
            "column 'k')",
        ),
        (
            _test(
                "    model: m\n    given:\n      - input: source('src', 's2')\n        rows:\n"
                "          - {k: 1, c: x}\n          - {k: 2, c: 3}\n" + GOOD_EXPECT
            ),
            "[unit_tests[0].given[0].rows] column 'c' of source('src', 's2') has values of "
            "different types (int, string)",
        ),
        (
            _test(
                "    model: m\n    given:\n      - input: source('src', 's2')\n        format: csv\n"
                "        rows: |\n          k,c\n          1,x,extra\n" + GOOD_EXPECT
            ),
            "[unit_tests[0].given[0].rows] csv line 2 has 3 values, the header 2 (k, c)",
        ),
        (
            _test(
                "    model: m\n    given:\n      - input: source('src', 's2')\n"
                "        rows: {k: 1}\n" + GOOD_EXPECT
            ),
            "[unit_tests[0].given[0].rows]",
        ),
        (
            _test("    model: m\n    expected:\n      rows: []\n"),
            "[unit_tests[0].expected]",
        ),
        (
            _test(
                "    model: m\n    plan: bootstrap\n    given:\n      - input: this\n" + GOOD_EXPECT
            ),
            "[unit_tests[0].plan] plan 'bootstrap' starts from no table, so `this` cannot be given",
        ),
        (
            _test("    model: counts\n    plan: incremental\n" + GOOD_EXPECT),
            "[unit_tests[0].plan] plan 'incremental' is for key tables",
        ),
        (
            _test("    model: m\n" + GOOD_EXPECT) + "  - name: t\n    model: m\n" + GOOD_EXPECT,
            "[unit_tests[1].name] two unit tests are named 't'",
        ),
        ("unit_tests: {name: t}\n", "[unit_tests] 'unit_tests' must be a list of mappings"),
        (
            _test("    model: m\n    expect:\n      rows:\n        - {k: 1, nope: 2}\n"),
            "[unit_tests[0].expect.rows[0]] expected column 'nope' is not a column of model m; "
            "its columns: k, a, b, g1, c, g2",
        ),
        (
            _test("    model: counts\n    expect:\n      rows:\n        - {k: 1, m: 2}\n"),
            "[unit_tests[0].expect.rows[0]] expected column 'm' is not a column of model "
            "counts; its columns: k, n",
        ),
        (
            _test(
                "    model: m\n    given:\n      - input: this\n        rows:\n"
                "          - {k: 1, z: 2}\n" + GOOD_EXPECT
            ),
            "[unit_tests[0].given[0].rows[0]] column 'z' of `this` is not a column of model m",
        ),
    ],
    ids=[
        "unknown-model",
        "input-not-of-the-model",
        "input-syntax",
        "this-on-a-table-model",
        "value-does-not-fit-declared-type",
        "mixed-types",
        "csv-line-length",
        "rows-not-a-list",
        "unknown-key",
        "bootstrap-with-this",
        "incremental-on-a-table",
        "duplicate-name",
        "not-a-list",
        "unknown-expected-column",
        "unknown-expected-column-of-a-table",
        "unknown-column-of-this",
    ],
)
@pytest.mark.parametrize("command", ["unit-test", "compile"])
def test_bad_unit_tests_exit_2_naming_file_and_key(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    tests: str,
    expected: str,
    command: str,
) -> None:
    """``unit-test`` checks the files before Spark starts; ``compile`` (the CI compile check)
    checks them too."""
    root = make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/m.sql": GROUPS_MODEL,
            "models/counts.sql": TABLE_MODEL,
            "models/unit.yml": tests,
        },
    )
    # no JVM: checked before Spark would start (JAVA_HOME pointing nowhere)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert code == 2, output
    assert "Traceback" not in output
    assert "models/unit.yml: " + expected in output.replace("\n", " ").replace("  ", " ") or (
        "models/unit.yml" in output and expected in output
    ), output


def test_select_matching_no_unit_test_is_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/m.sql": GROUPS_MODEL,
            "models/unit.yml": _test("    model: m\n" + GOOD_EXPECT),
        },
    )
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(root), "unit-test", "-s", "nope"
    )
    assert code == 2, output
    assert "no model" in output or "matches no" in output, output


def test_a_models_declared_column_types_type_its_ref_input(tmp_path: Path) -> None:
    """``data_type`` under a model's ``columns:`` (the model properties) types the columns of a
    unit test's ``ref()`` input of that model."""
    root = make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/m.sql": GROUPS_MODEL,
            "models/counts.sql": TABLE_MODEL,
            "models/m.yml": "models:\n  - name: m\n    columns:\n"
            "      - {name: k, data_type: int}\n      - {name: a, description: no type}\n",
        },
    )
    assert declared_types(manifest_of(root))["ref('m')"] == {"k": "int"}

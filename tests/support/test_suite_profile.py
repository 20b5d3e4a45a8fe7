"""Which tests a run selects (no JVM: collection only): the README's ``python -m pytest`` leaves the
soaks out, ``-m soak`` runs exactly them, a soak file named on the command line runs, and
``LW_SOAK=long`` runs everything (tests/support/suite_profile.py, pyproject.toml's addopts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INTEGRATION = "tests/integration"
#: the soaks: the REST catalog's faults and kills, the writers' races, the standalone cluster
SOAK_FILES = {
    f"{INTEGRATION}/test_rest_faults.py",
    f"{INTEGRATION}/test_rest_writers.py",
    f"{INTEGRATION}/test_writers_race.py",
    *(str(p.relative_to(REPO)) for p in (REPO / "tests" / "cluster").glob("test_*.py")),
}
#: files whose other cases run by default: the REST + S3 example and wide table on s3proxy (the
#: README's run keeps them on moto)
PARTLY_SOAK = {f"{INTEGRATION}/test_s3_warehouse.py"}


def collected_files(*args: str, soak: str = "") -> set[str]:
    """The files of the tests ``python -m pytest <args>`` selects, from the repository's root."""
    return set(collected_order(*args, soak=soak))


def collected_order(*args: str, soak: str = "") -> list[str]:
    """The files of the tests ``python -m pytest <args>`` selects, in the order the workers are
    handed them (each file once, where its first test is)."""
    env = {**os.environ, "LW_SOAK": soak}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 5), out.stdout + out.stderr  # 5: every test deselected
    files = [line.split("::")[0] for line in out.stdout.splitlines() if "::" in line]
    return list(dict.fromkeys(files))


def test_the_default_run_leaves_every_soak_out() -> None:
    files = collected_files(INTEGRATION)
    assert f"{INTEGRATION}/test_engines.py" in files
    assert not files & SOAK_FILES


def test_minus_m_soak_runs_the_soaks_and_nothing_else() -> None:
    assert collected_files("-m", "soak", INTEGRATION, "tests/cluster") == SOAK_FILES | PARTLY_SOAK
    assert PARTLY_SOAK <= collected_files(INTEGRATION)


def test_a_soak_file_or_folder_named_on_the_command_line_runs_beside_other_files() -> None:
    faults = f"{INTEGRATION}/test_rest_faults.py"
    engines = f"{INTEGRATION}/test_engines.py"
    race = f"{INTEGRATION}/test_writers_race.py"
    one_test = f"{race}::test_two_writers_raced_with_random_kills_apply_every_batch_once"
    cluster = {f for f in SOAK_FILES if f.startswith("tests/cluster/")}
    assert collected_files(faults, engines, one_test, "tests/cluster") == {
        faults,
        engines,
        race,
        *cluster,
    }


def test_the_long_profile_runs_the_soaks_too() -> None:
    files = collected_files(INTEGRATION, soak="long")
    assert files >= {f for f in SOAK_FILES if f.startswith(INTEGRATION)}
    assert f"{INTEGRATION}/test_engines.py" in files


def test_the_files_with_most_tests_on_spark_go_out_first() -> None:
    order = collected_order("tests/compiler", INTEGRATION)
    assert order[0].startswith(INTEGRATION), order[:3]
    assert order[-1].startswith("tests/compiler/"), order[-3:]
    # the property files (several tests on the session's SparkSession each) before a one-test file
    assert order.index(f"{INTEGRATION}/test_properties.py") < order.index(
        f"{INTEGRATION}/test_restate.py"
    )

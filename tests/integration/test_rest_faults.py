"""A REST catalog failing under a run (issue 29, item 6): a server answering 500 once, a token
it used to accept refused, the server gone in the middle of a commit. Each: a clear error naming
the catalog, the documented exit code, no table half-written, no secret in any output or log,
and the next run exact (tests/integration/test_rest_writers.py's race project and oracle).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.test_rest_writers import (
    SECRET,
    Catalog,
    Writer,
    assert_full_refresh_agrees,
    bootstrap,
    race_fixture,  # noqa: F401 - the fixture ``race``
    rest_catalog,
    run,
    snapshots,
    together,
)
from tests.integration.test_writers_race import Race, check

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.soak]

MODELS = ("m", "wide", "by_group", "summary")


@pytest.fixture(name="catalog")
def catalog_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalog]:
    """A REST catalog server of its own with a local warehouse (the faults are the catalog's)."""
    rest = rest_catalog(tmp_path_factory.mktemp("rest"))
    yield rest
    rest.server.stop()


def everything_written(writer: Writer) -> str:
    """The run's output and every file it left in its target folder."""
    files = sorted(p for p in (writer.project / "target").rglob("*") if p.is_file())
    return writer.log + "".join(p.read_text(errors="replace") for p in files)


#: faults set while a run waits before its first commit (m's MERGE): exit code, what it says
IN_COMMIT = {
    # a 500 to the commit: Iceberg calls its state unknown; lakewide plans m again
    "500-commit": (0, ["planned again after: catalog rest1", "did not confirm a commit"]),
    "revoke": (1, ["catalog rest1", "Token expired or revoked", "credential or token"]),
    "halt-commit": (1, ["catalog rest1", "check the profile's uri"]),
}


def test_rest_faults_are_said_leave_no_table_half_written_and_the_next_run_is_exact(
    race: Race, catalog: Catalog
) -> None:
    """Before Spark, a 500 once and a revoked token (exit 2); then each of IN_COMMIT; after
    each, the next run is exact."""
    sources = bootstrap(race)
    for fault in ("500-any", "revoke"):
        catalog.server.fault(fault)
        early = run(race, f"early-{fault}")
        catalog.server.fault("")
        assert early.code == 2, early.log
        assert "Spark not started" not in early.log and "starting Spark" not in early.log
        assert "catalog rest1 (rest at" in early.log and "Traceback" not in early.log
        assert SECRET not in everything_written(early)
        check(race)  # nothing written
    ns = f"{race.catalog}.analytics"
    for step, (fault, (code, says)) in enumerate(IN_COMMIT.items()):
        if step:
            sources.append(0)
        before = {m: snapshots(race, f"{ns}.{m}") for m in MODELS}
        [writer] = together(race, fault, [], at_gate=lambda f=fault: catalog.server.fault(f))
        print(f"\n--- {fault}: exit {writer.code}\n{writer.log}")
        if fault == "halt-commit":
            catalog.server.restart()
        catalog.server.fault("")
        said = writer.log + (writer.project / "target" / "run_results.json").read_text()
        assert writer.code == code, writer.log
        assert "Traceback" not in writer.log
        assert all(text in said for text in says), said
        assert SECRET not in everything_written(writer)
        after = {m: snapshots(race, f"{ns}.{m}") for m in MODELS}
        assert all(after[m][: len(before[m])] == before[m] for m in MODELS)
        check(race)  # no table half-written: each is the oracle at its last commit's offsets
        again = run(race, f"again-{fault}")
        assert again.code == 0, again.log
        check(race, everything=True)
    assert_full_refresh_agrees(race, *MODELS)

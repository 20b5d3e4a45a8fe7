"""``lakewide build``'s data tests: each test runs right after the last model it reads, and a
failing error-severity test skips that model's downstream models (as ``dbt build``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lakewide.project.data_tests import DataTest
from lakewide.project.manifest import Manifest
from lakewide.run.testing.data_test_runner import (
    TestResult,
    blocking,
    count_together,
    register_session_views,
    run_test,
    skipped,
)
from lakewide.spark.adapter import SparkAdapter


class TestsAfterModels:
    """The tests of a build's models, grouped under the model they run after."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        manifest: Manifest,
        adapter: SparkAdapter,
        names: list[str],
        report: Callable[[TestResult], None],
    ) -> None:
        self.manifest, self.adapter, self.report = manifest, adapter, report
        order = {name: index for index, name in enumerate(names)}
        self.after: dict[str, list[DataTest]] = {}
        for test in manifest.data_tests.values():
            in_build = [m for m in test.depends_on if m in order]
            if in_build:
                last = max(in_build, key=lambda m: order[m])
                self.after.setdefault(last, []).append(test)
        self.in_build = set(names)
        self.succeeded: set[str] = set()
        self.results: dict[str, list[TestResult]] = {}

    def after_model(self, result: Any) -> str | None:
        """Run the tests that wait for this (successful) model; when one fails with severity
        error, the reason its downstream models are skipped (``test <name> failed on upstream
        <model>``)."""
        self.succeeded.add(result.name)
        tests = self.after.get(result.name, [])
        register_session_views(
            self.manifest, self.adapter, {m for t in tests for m in t.depends_on}
        )
        self._catch_up(tests)
        results = self.results.setdefault(result.name, [])
        order = self.in_build

        def blocked(test: DataTest) -> list[str]:
            return [m for m in test.depends_on if m in order and m not in self.succeeded]

        counted = count_together(self.adapter, [t for t in tests if not blocked(t)])
        for test in tests:
            failed = blocked(test)
            outcome = (
                skipped(test, f"model {failed[0]} did not succeed")
                if failed
                else run_test(self.adapter, self.manifest, test, counted)
            )
            results.append(outcome)
            self.report(outcome)
        why = blocking(results)
        return None if why is None else f"test {why} on upstream {result.name}"

    def _catch_up(self, tests: list[DataTest]) -> None:
        """Let this session see the commits of the models the tests read: with ``--threads``
        a model commits from its own session, and this one's catalog may hold the table as
        it loaded it before."""
        for name in sorted({m for t in tests for m in t.depends_on}):
            relation = self.manifest.models[name].relation
            if relation.catalog:
                try:
                    self.adapter.refresh(relation)
                except Exception:  # noqa: BLE001 - not built (yet): the test reports it
                    continue

    def of(self, result: Any) -> list[TestResult]:
        """The results of the tests run after this model (skipped when it did not
        succeed)."""
        if result.name in self.results:
            return self.results[result.name]
        why = f"model {result.name} {result.status}"
        return [skipped(t, why) for t in self.after.get(result.name, [])]

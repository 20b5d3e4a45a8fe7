"""``lakewide build``'s data tests: each test runs right after the last model it reads, and a
failing error-severity test skips that model's downstream models (as ``dbt build``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lakewide.data_tests import DataTest
from lakewide.manifest import Manifest
from lakewide.spark.adapter import SparkAdapter
from lakewide.test_runner import TestResult, register_session_views, run_test, skipped


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
        self.final: list[TestResult] = []  # every test's result, once merged

    def after_model(self, result: Any) -> bool:
        """Run the tests that wait for this (successful) model; True when one fails with
        severity error (its downstream models are then skipped)."""
        self.succeeded.add(result.name)
        tests = self.after.get(result.name, [])
        register_session_views(
            self.manifest, self.adapter, {m for t in tests for m in t.depends_on}
        )
        results = self.results.setdefault(result.name, [])
        order = self.in_build
        for test in tests:
            failed = [m for m in test.depends_on if m in order and m not in self.succeeded]
            outcome = (
                skipped(test, f"model {failed[0]} did not succeed")
                if failed
                else run_test(self.adapter, self.manifest, test)
            )
            results.append(outcome)
            self.report(outcome)
        return any(r.blocks for r in results)

    def merged(self, model_results: list[Any]) -> list[Any]:
        """Model results, each followed by its tests' results (skipped when the model did
        not succeed)."""
        merged: list[Any] = []
        self.final = []
        for result in model_results:
            merged.append(result)
            if result.name in self.results:
                tests = self.results[result.name]
            else:
                why = f"model {result.name} {result.status}"
                tests = [skipped(t, why) for t in self.after.get(result.name, [])]
            merged.extend(tests)
            self.final.extend(tests)
        return merged

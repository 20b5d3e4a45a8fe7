"""Model unit tests in ``lakewide build`` and ``lakewide test``: a model's unit tests run right
before the model (as ``dbt build`` 1.8 does), on the session the model runs on (inline
data, or a throwaway catalog: ``lakewide.run.testing.unit_tests.runner``); a failing one skips the
model and its downstream models. Results take the shape of data tests' (``test_type: unit``,
``resource_type: unit_test``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from lakewide.project.manifest import Manifest
from lakewide.run.testing.data_test_runner import TestResult, blocking
from lakewide.run.testing.unit_tests.runner import UnitTestResult, run_unit_tests
from lakewide.run.testing.unit_tests.spec import UnitTest
from lakewide.spark.adapter import SparkAdapter


def as_test_result(result: UnitTestResult) -> TestResult:
    """A unit test's result as ``run_results.json`` and the test lines show every test's."""
    return TestResult(
        result.name,
        result.status,
        test_type="unit",
        resource_type="unit_test",
        model=result.model,
        seconds=result.seconds,
        message=result.message,
        plan=result.plan,
    )


def run_as_test_results(
    manifest: Manifest,
    adapter: SparkAdapter,
    tests: list[UnitTest],
    variables: dict[str, Any] | None,
    on_result: Callable[[TestResult], None] | None = None,
) -> list[TestResult]:
    """Run ``tests`` (``lakewide test``), reporting each result as it comes."""

    def report(result: UnitTestResult) -> None:
        if on_result is not None:
            on_result(as_test_result(result))

    done = run_unit_tests(manifest, adapter, tests, variables=variables, on_result=report)
    return [as_test_result(r) for r in done]


class UnitTestsBeforeModels:
    """The unit tests of a build's models, grouped under the model they run before. They run
    on the command's own session, one model's at a time (with ``--threads``, while other
    models run on theirs): a new session of the SparkContext was seen, in the test suite,
    not to resolve the scratch catalog registered on it."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        manifest: Manifest,
        adapter: SparkAdapter,
        tests: list[UnitTest],
        variables: dict[str, Any] | None,
    ) -> None:
        self.manifest, self.adapter, self.variables = manifest, adapter, variables
        self._one_at_a_time = threading.Lock()
        self.before: dict[str, list[UnitTest]] = {}
        for test in tests:
            self.before.setdefault(test.model, []).append(test)
        self.results: dict[str, list[TestResult]] = {}

    def before_model(self, name: str, _runner: SparkAdapter) -> str | None:
        """Run the model's unit tests (inline, or a scratch catalog each); the reason to skip
        the model when one fails or cannot run."""
        tests = self.before.get(name, [])
        if not tests:
            return None
        with self._one_at_a_time:
            done = run_unit_tests(self.manifest, self.adapter, tests, variables=self.variables)
        results = [as_test_result(r) for r in done]
        self.results[name] = results
        why = blocking(results)
        return None if why is None else f"unit test {why}"

    def of(self, result: Any) -> list[TestResult]:
        """The results of the unit tests run before this model (skipped when the model was
        not started: an upstream model failed)."""
        if result.name in self.results:
            return self.results[result.name]
        why = f"model {result.name} {result.status}"
        return [
            TestResult(
                t.name,
                "skipped",
                test_type="unit",
                resource_type="unit_test",
                model=t.model,
                message=why,
            )
            for t in self.before.get(result.name, [])
        ]

"""Model unit tests (dbt 1.8's ``unit_tests:``): given rows for a model's inputs (and the
stored rows of ``this``), expected rows out, on inline data (the incremental plan: a
throwaway catalog) of the embedded Spark."""

from lakewide.run.testing.unit_tests.spec import UnitTest, load_unit_tests

__all__ = ["UnitTest", "load_unit_tests"]

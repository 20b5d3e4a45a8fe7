"""Tests around models: data tests run on the adapter and judged, data tests right after the
models they read (``lakewide build``), model unit tests before their models, and the unit
tests themselves (``unit_tests/``: dbt 1.8's ``unit_tests:`` on inline data).

Imports ``run.models`` (a unit test runs its model's plan) and ``run.schema``."""

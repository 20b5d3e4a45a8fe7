"""Fixtures of the cluster tests: the session's Spark standalone cluster (tests/support/spark_cluster.py)."""

from tests.support.spark_cluster import spark_cluster  # noqa: F401 - a pytest fixture, used by name

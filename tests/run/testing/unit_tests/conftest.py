"""Fixtures of the unit-test feature's tests."""

from tests.features.test_bad_inputs import session_adapter  # noqa: F401 - the CLI on the test session

"""Which unit tests --select/--exclude name (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.errors import ConfigError
from lakewide.unit_tests import load_unit_tests
from lakewide.unit_tests.select import select_unit_tests
from tests.project_factory import copy_example_project, manifest_of


@pytest.mark.parametrize(
    ("selectors", "exclude", "models"),
    [
        (
            [],
            [],
            {
                "order_detail",
                "order_groups",
                "order_status_counts",
                "user_activity",
                "user_rec_wide",
            },
        ),
        (["order_detail"], [], {"order_detail"}),
        (["tag:wide"], ["user_activity"], {"order_detail", "order_groups", "user_rec_wide"}),
        (["order_detail+"], [], {"order_detail", "order_status_counts"}),
        (["user_activity_incremental_adds_to_the_stored_counters"], [], {"user_activity"}),
    ],
)
def test_select_by_model_or_name(
    tmp_path: Path, selectors: list[str], exclude: list[str], models: set[str]
) -> None:
    manifest = manifest_of(copy_example_project(tmp_path / "example"))
    tests = load_unit_tests(manifest)
    assert {t.model for t in select_unit_tests(manifest, tests, selectors, exclude)} == models


def test_a_selector_selecting_no_test(tmp_path: Path) -> None:
    manifest = manifest_of(copy_example_project(tmp_path / "example"))
    tests = load_unit_tests(manifest)
    tests = [t for t in tests if t.model != "user_activity"]
    with pytest.raises(ConfigError, match="matches no unit test"):
        select_unit_tests(manifest, tests, ["user_activity"], [])
    assert select_unit_tests(manifest, tests, ["user_activity"], [], require_match=False) == []


def test_a_disabled_unit_test_is_not_loaded(tmp_path: Path) -> None:
    root = copy_example_project(tmp_path / "example")
    (root / "models" / "off.yml").write_text(
        "unit_tests:\n  - name: switched_off\n    model: gone\n    config: {enabled: false}\n"
        "    expect: {rows: []}\n"
    )
    assert "switched_off" not in {t.name for t in load_unit_tests(manifest_of(root))}

"""Which unit tests --select/--exclude name (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.commands.build import _models_only
from lakewide.commands.services.tests import chosen_tests, chosen_unit_tests, kinds_to_run
from lakewide.run.testing.unit_tests import load_unit_tests
from lakewide.run.testing.unit_tests.select import select_unit_tests
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import REPO_ROOT, copy_example_project, manifest_of


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


def test_the_example_pins_sequence_groups_under_both_plans() -> None:
    manifest = manifest_of(REPO_ROOT)
    tests = load_unit_tests(manifest)
    grouped = [t for t in tests if manifest.models[t.model].config.sequence_groups]
    assert {t.plan for t in grouped} == {"bootstrap", "incremental"}
    wide = {n for n, m in manifest.models.items() if "wide" in m.config.tags}
    assert wide <= {t.model for t in tests}  # every wide model has unit tests


def test_lakewide_test_chooses_unit_and_data_tests(tmp_path: Path) -> None:
    manifest = manifest_of(copy_example_project(tmp_path / "example"))
    units = {t.name: t for t in load_unit_tests(manifest)}

    def chosen(
        select: tuple[str, ...] = (), exclude: tuple[str, ...] = (), **types: tuple[str, ...]
    ) -> tuple[set[str], set[str]]:
        kinds = kinds_to_run(select, exclude, **types)
        data = {t.name for t in chosen_tests(manifest, select, exclude, kinds)}  # checks first
        return {t.name for t in chosen_unit_tests(manifest, select, exclude, kinds)}, data

    everything = (set(units), set(manifest.data_tests))
    assert chosen() == everything
    group_units = {n for n, t in units.items() if t.model == "order_groups"}
    group_data = {n for n, t in manifest.data_tests.items() if "order_groups" in t.depends_on}
    assert len(group_units) == 2 and group_data
    assert chosen(("order_groups",)) == (group_units, group_data)
    assert chosen(("test_type:unit",)) == (set(units), set())
    assert chosen(("test_type:data",)) == (set(), set(manifest.data_tests))
    assert chosen(resource_types=("unit_test",)) == (set(units), set())
    assert chosen(resource_types=("test", "unit_test")) == everything
    assert chosen(exclude_resource_types=("unit_test",)) == (set(), set(manifest.data_tests))
    assert chosen(("test_type:unit",), resource_types=("test",)) == (set(), set())
    name = sorted(group_units)[0]
    assert chosen((name,)) == ({name}, set())  # a unit test's name is a selector
    assert chosen(("test_name:unique",))[0] == set()  # data tests' kinds name no unit test
    assert chosen((), ("order_groups",)) == (
        set(units) - group_units,
        set(manifest.data_tests) - group_data,
    )
    with pytest.raises(ConfigError, match="names no model and no test"):
        chosen(("order_grups",))


def test_build_takes_test_types_in_exclude_only() -> None:
    assert _models_only(("order_detail",), ("test_type:unit user_activity",)) == ("user_activity",)
    with pytest.raises(ConfigError, match="build --select takes models"):
        _models_only(("test_type:unit",), ())

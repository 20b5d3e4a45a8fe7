"""parse_model_config: the keys of ``{{ config(...) }}``, their validation and error messages."""

from __future__ import annotations

import pytest

from lakewide.project.config.model_config import ACCEPTED_KEYS, parse_model_config
from lakewide.vocabulary.errors import ConfigError

PATH = "models/m.sql"


def parse(**raw: object):
    return parse_model_config(raw, path=PATH, line=3, model="m")


def test_unknown_key_suggests_the_nearest_and_lists_accepted_keys() -> None:
    with pytest.raises(ConfigError) as info:
        parse(merge_engine="partial_update", primay_key="id")
    err = info.value
    assert err.key == "primay_key"
    assert "unknown config key 'primay_key'" in err.message
    assert "Did you mean 'primary_key'?" in err.message
    for accepted in ("primary_key", "merge_engine", "sequence_field", "schema", "alias"):
        assert accepted in err.message
    assert err.path == PATH and err.line == 3 and err.model == "m"
    assert str(err).startswith("models/m.sql:3: [primay_key] ")


def test_unknown_key_far_from_any_gives_no_suggestion() -> None:
    with pytest.raises(ConfigError) as info:
        parse(zzzzzz=1)
    assert "Did you mean" not in info.value.message
    assert "Accepted keys:" in info.value.message


def test_accepted_keys_show_schema_not_the_internal_field_name() -> None:
    assert "schema" in ACCEPTED_KEYS and "schema_" not in ACCEPTED_KEYS


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"ignore_delete": "sometimes"}, "ignore_delete"),
        ({"primary_key": 5}, "primary_key"),
        ({"format_version": 7}, "format_version"),
        ({"materialized": "tabel"}, "materialized"),
        ({"table_properties": ["a"]}, "table_properties"),
        ({"schema": 5}, "schema"),
    ],
)
def test_wrong_type_names_the_key_and_the_value(raw: dict, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(**raw)
    assert info.value.key == key
    assert repr(raw[key]) in info.value.message
    assert f"[{key}]" in str(info.value)


def test_merge_engine_without_primary_key() -> None:
    with pytest.raises(ConfigError) as info:
        parse(merge_engine="partial_update")
    assert info.value.key == "primary_key"
    assert "merge_engine='partial_update' needs primary_key" in info.value.message


def test_materialized_primary_key_without_merge_engine() -> None:
    with pytest.raises(ConfigError) as info:
        parse(materialized="primary_key", primary_key="id")
    assert info.value.key == "merge_engine"
    assert "partial_update" in info.value.message


@pytest.mark.parametrize("materialized", ["table", "view", "incremental"])
def test_materialized_with_merge_engine_is_rejected(materialized: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(materialized=materialized, merge_engine="partial_update", primary_key="id")
    assert info.value.key == "materialized"
    assert f"materialized='{materialized}' conflicts with merge_engine" in info.value.message
    assert "drop materialized" in info.value.message


def test_materialized_primary_key_with_merge_engine_is_fine() -> None:
    config = parse(materialized="primary_key", merge_engine="partial_update", primary_key="id")
    assert config.kind == "primary_key"


def test_comma_separated_string_becomes_a_list() -> None:
    config = parse(
        merge_engine="partial_update", primary_key="a, b", sequence_field="ts", tags="x,y"
    )
    assert config.primary_key == ["a", "b"]
    assert config.sequence_field == ["ts"]
    assert config.tags == ["x", "y"]


def test_list_primary_key_is_kept_in_order() -> None:
    assert parse(merge_engine="partial_update", primary_key=["b", "a"]).primary_key == ["b", "a"]


def test_schema_key_maps_to_schema_attribute() -> None:
    config = parse(schema="marts", alias="t")
    assert config.schema == "marts"
    assert config.alias == "t"


def test_kind_defaults_to_table_and_merge_engine_implies_primary_key() -> None:
    assert parse().kind == "table"
    assert parse(materialized="view").kind == "view"
    assert parse(merge_engine="partial_update", primary_key="id").kind == "primary_key"


@pytest.mark.parametrize("value", [[1], {"x": 1}, None])
def test_table_property_values_are_scalars(value: object) -> None:
    """A list, mapping or None is refused, not stored as its Python text ('[1]', 'None')."""
    with pytest.raises(ConfigError) as info:
        parse(table_properties={"write.target-file-size-bytes": 1, "a": value})
    assert info.value.key == "table_properties"
    assert f"property 'a' has the value {value!r}; Iceberg table properties are" in str(info.value)


def test_table_properties_booleans_are_lowercase_strings() -> None:
    config = parse(table_properties={"write.wap.enabled": True, "n": 3})
    assert config.table_properties == {"write.wap.enabled": "true", "n": "3"}


def test_the_merge_engine_chooses_the_config_class() -> None:
    from lakewide.project.config.model_config import (
        AggregationConfig,
        FirstRowConfig,
        PartialUpdateConfig,
        TableConfig,
    )

    assert isinstance(parse(), TableConfig)
    assert isinstance(parse(merge_engine="aggregation", primary_key="k"), AggregationConfig)
    assert isinstance(parse(merge_engine="first_row", primary_key="k"), FirstRowConfig)
    assert isinstance(parse(merge_engine="partial_update", primary_key="k"), PartialUpdateConfig)


def test_unknown_merge_engine_lists_the_engines() -> None:
    with pytest.raises(ConfigError) as info:
        parse(merge_engine="partial", primary_key="k")
    assert info.value.key == "merge_engine"
    assert "expected one of partial_update, aggregation, deduplicate, first_row" in str(info.value)


@pytest.mark.parametrize(
    "key,value",
    [
        ("sequence_field", "ts"),
        ("ignore_delete", True),
        ("aggregates", {"n": "sum"}),
        ("merge_filter", True),
    ],
)
def test_a_key_table_key_on_a_table_says_to_set_a_merge_engine(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        parse(materialized="table", **{key: value})
    assert info.value.key == key
    assert "set merge_engine (one of partial_update" in info.value.message


def test_engine_rules_are_compile_errors_with_the_config_line() -> None:
    from lakewide.vocabulary.errors import CompileError

    with pytest.raises(CompileError) as info:
        parse(merge_engine="partial_update", primary_key="k", row_kind_column="op")
    assert info.value.key == "row_kind_column" and info.value.line == 3
    assert str(info.value).startswith("models/m.sql:3: [row_kind_column] partial_update cannot")


def test_sequence_groups_and_aggregates_are_typed_and_dumped_as_written() -> None:
    config = parse(
        merge_engine="partial_update",
        primary_key="k",
        sequence_groups={"g_1, g_2": ["a", "b"]},
        aggregates={"a": "sum", "b": {"function": "listagg", "distinct": False}},
    )
    [group] = config.sequence_groups
    assert (group.sequence, group.columns, group.name) == (["g_1", "g_2"], ["a", "b"], "g_1,g_2")
    assert config.aggregates["a"].function == "sum" and config.aggregates["a"].options == {}
    assert config.aggregates["b"].options == {"distinct": False}
    dumped = config.model_dump(mode="json", exclude_defaults=True)
    assert dumped["sequence_groups"] == {"g_1, g_2": ["a", "b"]}
    assert dumped["aggregates"] == {"a": "sum", "b": {"function": "listagg", "distinct": False}}


def test_an_aggregate_option_error_names_the_column_key() -> None:
    from lakewide.vocabulary.errors import CompileError

    with pytest.raises(CompileError) as info:
        parse(
            merge_engine="aggregation",
            primary_key="k",
            aggregates={"n": {"function": "listagg", "separator": ","}},
        )
    assert info.value.key == "aggregates.n"
    assert (
        "option 'separator' does not apply to listagg; accepted: function, ignore_retract, "
        "delimiter, distinct" in info.value.message
    )

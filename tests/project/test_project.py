"""Projects on disk: [tool.lakewide], profiles.yml, sources, jinja rendering and the manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.project.nodes import Relation
from lakewide.project.profiles_file import find_profiles_file, load_output
from lakewide.project.settings import load_project
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project, manifest_of

SOURCES = """\
sources:
  - name: raw
    schema: landing
    tables:
      - name: orders
      - name: users
        identifier: users_v2
  - name: crm
    tables:
      - name: contacts
"""


# ---------------------------------------------------------------- pyproject.toml [tool.lakewide]


def test_load_project_defaults(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"pyproject.toml": '[project]\nname = "shop"\n'})
    project = load_project(root)
    assert project.root == root.resolve()
    assert project.name == "shop"
    assert project.profile == "shop"
    assert project.model_paths == [root.resolve() / "models"]
    assert project.macro_paths == [root.resolve() / "macros"]
    assert project.seed_paths == [root.resolve() / "seeds"]
    assert project.target_path == root.resolve() / "target"
    assert project.seed_schema is None
    assert project.vars == {}


def test_project_name_defaults_to_the_folder(tmp_path: Path) -> None:
    root = make_project(tmp_path / "my_proj", {"pyproject.toml": "[tool.lakewide]\n"})
    assert load_project(root).name == "my_proj"
    assert load_project(root).profile == "my_proj"


def test_settings_are_read(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "pyproject.toml": """\
        [tool.lakewide]
        profile = "p"
        model-paths = ["sql", "more"]
        target-path = "out"
        seed-schema = "raw"
        vars = { day = "2024-05-01" }
        """
        },
    )
    project = load_project(root)
    assert project.profile == "p"
    assert project.model_paths == [root.resolve() / "sql", root.resolve() / "more"]
    assert project.target_path == root.resolve() / "out"
    assert project.seed_schema == "raw"
    assert project.vars == {"day": "2024-05-01"}


def test_unknown_setting_names_pyproject_and_the_key(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"pyproject.toml": '[tool.lakewide]\nmodels-path = ["m"]\n'})
    with pytest.raises(ConfigError) as info:
        load_project(root)
    err = info.value
    assert Path(err.path).name == "pyproject.toml"
    assert err.key == "tool.lakewide.models-path"
    assert "unknown setting 'models-path'" in err.message
    assert "model-paths" in err.message  # lists what is accepted
    assert "pyproject.toml" in str(err) and "models-path" in str(err)


def test_missing_pyproject_says_how_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="lakewide init"):
        load_project(tmp_path)


def test_bad_model_paths_type(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"pyproject.toml": "[tool.lakewide]\nmodel-paths = 3\n"})
    with pytest.raises(ConfigError) as info:
        load_project(root)
    assert info.value.key == "tool.lakewide.model-paths"


def test_invalid_toml(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"pyproject.toml": "[tool.lakewide\n"})
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_project(root)


# ---------------------------------------------------------------- profiles.yml


PROFILE_WITH_ENV = """\
demo:
  target: "{{ env_var('LW_TEST_TARGET', 'dev') }}"
  outputs:
    dev:
      master: "{{ env_var('LW_TEST_MASTER', 'local[3]') }}"
      catalog: lw
      namespace: analytics
    prod:
      catalog: prod_cat
      catalog_type: rest
      uri: http://catalog:8181
      warehouse: s3://bucket/wh
"""


def test_env_var_default_in_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LW_TEST_TARGET", raising=False)
    monkeypatch.delenv("LW_TEST_MASTER", raising=False)
    root = make_project(tmp_path, {"profiles.yml": PROFILE_WITH_ENV})
    output = load_output(root / "profiles.yml", "demo", project_root=root)
    assert output.master == "local[3]"
    assert output.catalog == "lw"


def test_env_var_set_in_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LW_TEST_TARGET", "prod")
    monkeypatch.setenv("LW_TEST_MASTER", "spark://x:7077")
    root = make_project(tmp_path, {"profiles.yml": PROFILE_WITH_ENV})
    output = load_output(root / "profiles.yml", "demo", project_root=root)
    assert output.catalog == "prod_cat"
    assert output.catalog_type == "rest"
    assert output.warehouse == "s3://bucket/wh"
    assert output.iceberg_catalog_properties() == {
        "type": "rest",
        "warehouse": "s3://bucket/wh",
        "uri": "http://catalog:8181",
        # an s3:// warehouse is read and written through Iceberg's S3FileIO
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
    }


def test_env_var_set_is_used_for_master(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LW_TEST_MASTER", "spark://x:7077")
    monkeypatch.delenv("LW_TEST_TARGET", raising=False)
    root = make_project(tmp_path, {"profiles.yml": PROFILE_WITH_ENV})
    assert load_output(root / "profiles.yml", "demo").master == "spark://x:7077"


def test_env_var_without_default_and_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LW_TEST_UNSET", raising=False)
    root = make_project(
        tmp_path,
        {
            "profiles.yml": """\
        demo:
          outputs:
            dev:
              master: "{{ env_var('LW_TEST_UNSET') }}"
        """
        },
    )
    with pytest.raises(ConfigError) as info:
        load_output(root / "profiles.yml", "demo")
    assert "LW_TEST_UNSET" in info.value.message
    assert "env_var('LW_TEST_UNSET', '<default>')" in info.value.message
    assert info.value.path == root / "profiles.yml"


def test_missing_profile_lists_profiles(tmp_path: Path) -> None:
    root = make_project(tmp_path, {})
    with pytest.raises(ConfigError) as info:
        load_output(root / "profiles.yml", "nope")
    assert "profile 'nope' not found" in info.value.message
    assert "profiles here: demo" in info.value.message
    assert info.value.path == root / "profiles.yml"


def test_missing_target_lists_targets(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"profiles.yml": PROFILE_WITH_ENV})
    with pytest.raises(ConfigError) as info:
        load_output(root / "profiles.yml", "demo", "staging")
    assert "target 'staging' not found in profile 'demo'" in info.value.message
    assert "targets: dev, prod" in info.value.message


def test_unknown_output_key_names_the_key(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "profiles.yml": """\
        demo:
          target: dev
          outputs:
            dev:
              catalog: lw
              namespcae: analytics
        """
        },
    )
    with pytest.raises(ConfigError) as info:
        load_output(root / "profiles.yml", "demo")
    assert info.value.key == "demo.outputs.dev.namespcae"
    assert "namespace" in info.value.message  # accepted keys are listed


def test_relative_hadoop_warehouse_resolves_against_project_root(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj", {})
    elsewhere = tmp_path / "profiles_dir"
    make_project(elsewhere, {"pyproject.toml": None})
    output = load_output(elsewhere / "profiles.yml", "demo", project_root=root)
    assert output.warehouse == str((root / "warehouse").resolve())
    assert output.iceberg_catalog_properties()["warehouse"] == output.warehouse


def test_hadoop_warehouse_defaults_to_project_warehouse(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"profiles.yml": "demo:\n  outputs:\n    dev: {}\n"})
    output = load_output(root / "profiles.yml", "demo", project_root=root)
    assert output.catalog_type == "hadoop"
    assert output.warehouse == str((root / "warehouse").resolve())


def test_profiles_dir_takes_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKEWIDE_PROFILES_DIR", raising=False)
    root = make_project(tmp_path / "proj", {})
    other = make_project(tmp_path / "other", {"pyproject.toml": None})
    assert find_profiles_file(root) == root / "profiles.yml"
    assert find_profiles_file(root, other) == other / "profiles.yml"


# ---------------------------------------------------------------- sources and rendering


def test_source_resolves_schema_and_identifier(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/m.sql": "SELECT * FROM {{ source('raw', 'users') }} "
            "JOIN {{ source('crm', 'contacts') }}",
        },
    )
    node = manifest_of(root).models["m"]
    assert node.sql == "SELECT * FROM lw.landing.users_v2 JOIN lw.crm.contacts"
    assert node.sources == [("raw", "users"), ("crm", "contacts")]


def test_undeclared_source_lists_declared(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/sources.yml": SOURCES,
            "models/m.sql": "SELECT * FROM {{ source('raw', 'order') }}",
        },
    )
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    err = info.value
    assert "source('raw', 'order') is not declared" in err.message
    assert "crm.contacts, raw.orders, raw.users" in err.message
    assert Path(err.path).name == "m.sql"


def test_sources_yml_must_be_a_list_of_named_mappings(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"models/sources.yml": "sources:\n  - schema: x\n"})
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    assert info.value.key == "sources"
    assert Path(info.value.path).name == "sources.yml"


def test_render_config_ref_and_relation(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/base.sql": "{{ config(materialized='table', tags=['core']) }}\nSELECT 1 AS id",
            "models/child.sql": "\n\n{{ config(materialized='table') }}\n"
            "SELECT id FROM {{ ref('base') }}",
        },
    )
    manifest = manifest_of(root)
    base, child = manifest.models["base"], manifest.models["child"]
    assert base.config.tags == ["core"] and base.config_line == 1
    assert base.sql.strip() == "SELECT 1 AS id"
    assert base.relation == Relation("lw", "analytics", "base")
    assert child.sql.strip() == "SELECT id FROM lw.analytics.base"
    assert child.refs == ["base"]
    assert child.config_line == 3


def test_var_from_project_and_override(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "pyproject.toml": '[tool.lakewide]\nprofile = "demo"\nvars = { day = "2024-05-01" }\n',
            "models/m.sql": "SELECT '{{ var('day') }}' AS d, {{ var('n', 7) }} AS n",
        },
    )
    assert manifest_of(root).models["m"].sql == "SELECT '2024-05-01' AS d, 7 AS n"
    overridden = manifest_of(root, variables={"day": "2024-06-01", "n": 1}).models["m"]
    assert overridden.sql == "SELECT '2024-06-01' AS d, 1 AS n"


def test_undefined_var_error(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"models/m.sql": "SELECT {{ var('missing') }}"})
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    assert "var('missing') is not defined" in info.value.message
    assert "--vars" in info.value.message
    assert Path(info.value.path).name == "m.sql"


def test_env_var_in_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LW_TEST_DAY", "2024-01-02")
    monkeypatch.delenv("LW_TEST_OTHER", raising=False)
    root = make_project(
        tmp_path,
        {
            "models/m.sql": "SELECT '{{ env_var('LW_TEST_DAY') }}', '{{ env_var('LW_TEST_OTHER', 'x') }}'",
        },
    )
    assert manifest_of(root).models["m"].sql == "SELECT '2024-01-02', 'x'"


def test_is_incremental_and_this(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/m.sql": """\
        {{ config(schema='marts') }}
        SELECT * FROM src
        {% if is_incremental() %}WHERE ts > (SELECT MAX(ts) FROM {{ this }}){% endif %}
        """
        },
    )
    full = manifest_of(root).models["m"]
    assert "WHERE" not in full.sql
    incremental = manifest_of(root, incremental={"m"}).models["m"]
    assert "WHERE ts > (SELECT MAX(ts) FROM lw.marts.m)" in incremental.sql


def test_macro_from_macros_folder(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "macros/money.sql": "{% macro cents(col) -%}CAST({{ col }} * 100 AS BIGINT){%- endmacro %}",
            "models/m.sql": "SELECT {{ cents('price') }} AS price_cents FROM t",
        },
    )
    assert (
        manifest_of(root).models["m"].sql
        == "SELECT CAST(price * 100 AS BIGINT) AS price_cents FROM t"
    )


def test_template_syntax_error_has_path_and_line(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"models/m.sql": "SELECT 1\nFROM {{ ref('x' }}\n"})
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    assert Path(info.value.path).name == "m.sql"
    assert info.value.line == 2


def test_bad_config_in_model_names_relative_path_and_line(tmp_path: Path) -> None:
    root = make_project(
        tmp_path, {"models/sub/m.sql": "-- x\n{{ config(primay_key='id') }}\nSELECT 1 AS id"}
    )
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    assert info.value.path == "models/sub/m.sql"
    assert info.value.line == 2
    assert info.value.key == "primay_key"
    assert info.value.model == "m"


# ---------------------------------------------------------------- manifest


def test_duplicate_model_names(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/a/dup.sql": "SELECT 1 AS x",
            "models/b/dup.sql": "SELECT 2 AS x",
        },
    )
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    msg = info.value.message
    assert "two models are named 'dup'" in msg
    assert "models/a/dup.sql" in msg and "models/b/dup.sql" in msg


def test_ref_to_unknown_model(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/a.sql": "SELECT 1 AS x",
            "models/b.sql": "SELECT * FROM {{ ref('nope') }}",
        },
    )
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    assert "ref('nope') names no model" in info.value.message
    assert "models: a, b" in info.value.message
    assert Path(info.value.path).name == "b.sql"


def test_schema_and_alias_change_the_relation(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/a.sql": "{{ config(schema='marts', alias='orders_v2') }}\nSELECT 1 AS x",
            "models/b.sql": "SELECT * FROM {{ ref('a') }}",
        },
    )
    manifest = manifest_of(root)
    assert manifest.models["a"].relation == Relation("lw", "marts", "orders_v2")
    assert manifest.models["b"].sql == "SELECT * FROM lw.marts.orders_v2"


def test_view_on_hadoop_catalog_is_a_bare_name(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/v.sql": "{{ config(materialized='view') }}\nSELECT 1 AS x",
            "models/t.sql": "SELECT * FROM {{ ref('v') }}",
        },
    )
    manifest = manifest_of(root)
    assert manifest.models["v"].relation == Relation("", "", "v")
    assert manifest.models["t"].sql == "SELECT * FROM v"


def test_view_on_rest_catalog_keeps_the_namespace(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "profiles.yml": "demo:\n  outputs:\n    dev:\n      catalog: c\n      catalog_type: rest\n"
            "      uri: http://x\n      namespace: ns\n",
            "models/v.sql": "{{ config(materialized='view') }}\nSELECT 1 AS x",
        },
    )
    assert manifest_of(root).models["v"].relation == Relation("c", "ns", "v")


def test_disabled_model_is_left_out_and_refs_to_it_fail(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        {
            "models/off.sql": "{{ config(enabled=false) }}\nSELECT 1 AS x",
        },
    )
    assert manifest_of(root).models == {}
    make_project(tmp_path, {"models/on.sql": "SELECT * FROM {{ ref('off') }}"})
    with pytest.raises(ConfigError, match="disabled model"):
        manifest_of(root)


@pytest.mark.parametrize(
    "yml,key,fragment",
    [
        (
            "sources:\n  - name: raw\n    tables:\n      - name: a\n        identifer: b\n",
            "sources[0].tables[0].identifer",
            "Did you mean 'identifier'?",
        ),
        (
            "sources:\n  - name: raw\n    shema: x\n    tables:\n      - name: a\n",
            "sources[0].shema",
            "Did you mean 'schema'?",
        ),
        (
            "sources:\n  - name: raw\n    tables:\n      - name: [a]\n",
            "sources[0].tables[0].name",
            "invalid value ['a']",
        ),
    ],
)
def test_sources_yml_keys_are_checked(tmp_path: Path, yml: str, key: str, fragment: str) -> None:
    root = make_project(tmp_path, {"models/sources.yml": yml})
    with pytest.raises(ConfigError) as info:
        manifest_of(root)
    assert info.value.key == key
    assert fragment in info.value.message
    assert Path(info.value.path).name == "sources.yml"


def test_sources_yml_takes_dbt_documentation_keys(tmp_path: Path) -> None:
    yml = (
        "sources:\n  - name: raw\n    schema: ods\n    description: upstream\n    tables:\n"
        "      - name: a\n        identifier: a_v2\n        description: rows\n"
        "        columns: [{name: id, description: key}]\n"
    )
    root = make_project(
        tmp_path,
        {"models/sources.yml": yml, "models/m.sql": "SELECT id FROM {{ source('raw', 'a') }}"},
    )
    assert "a_v2" in manifest_of(root).models["m"].sql


@pytest.mark.parametrize(
    "setting,key",
    [
        ("profile = [5]", "tool.lakewide.profile"),
        ("seed-schema = [1]", "tool.lakewide.seed-schema"),
        ("vars = 3", "tool.lakewide.vars"),
        ('macro-paths = ["m", {a = 1}]', "tool.lakewide.macro-paths[1]"),
    ],
)
def test_settings_of_the_wrong_type_name_the_key(tmp_path: Path, setting: str, key: str) -> None:
    root = make_project(tmp_path, {"pyproject.toml": f"[tool.lakewide]\n{setting}\n"})
    with pytest.raises(ConfigError) as info:
        load_project(root)
    assert info.value.key == key
    assert Path(info.value.path).name == "pyproject.toml"
    assert "invalid value" in info.value.message

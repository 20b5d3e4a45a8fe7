"""Bad inputs end in a clear message (file, line/key, fix), exit 2 (usage/config) or 1 (a failed
model), no traceback and nothing written. One parametrized test per kind of input; no JVM."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lakewide.project.profiles_file import load_output
from lakewide.vocabulary.errors import ConfigError
from tests.support.cli_process import quick_jvm
from tests.support.project_factory import make_project, run_main

MODEL = """\
{{ config(materialized='table', tags=['daily']) }}
SELECT {{ var('n', 1) }} AS n
"""


@pytest.fixture(autouse=True)
def _no_outside_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKEWIDE_PROFILES_DIR", raising=False)


def assert_clean_failure(code: int, output: str, *expected: str, exit_code: int = 2) -> None:
    assert code == exit_code, output
    assert "Traceback" not in output, output
    for text in expected:
        assert text in output, output


# ---------------------------------------------------------------- 1. init keeps user files


@pytest.mark.parametrize(
    ("relative", "mine"),
    [
        ("profiles.yml", "mine:\n  target: dev\n  outputs:\n    dev: {}\n"),
        ("models/sources.yml", "sources:\n  - name: mine\n"),
        ("seeds/orders.csv", "id\n42\n"),
    ],
    ids=["profiles", "sources", "seed"],
)
def test_init_keeps_existing_files(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    relative: str,
    mine: str,
) -> None:
    path = tmp_path / "shop" / relative
    path.parent.mkdir(parents=True)
    path.write_text(mine)
    code, output = run_main(monkeypatch, capsys, "init", str(tmp_path / "shop"))
    assert code == 0, output
    assert path.read_text() == mine
    assert f"kept {path}" in output
    assert (tmp_path / "shop" / "pyproject.toml").is_file()


def test_init_appends_to_an_existing_gitignore(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gitignore = tmp_path / "shop" / ".gitignore"
    gitignore.parent.mkdir()
    gitignore.write_text("*.pyc\ntarget/")
    code, output = run_main(monkeypatch, capsys, "init", str(tmp_path / "shop"))
    assert code == 0, output
    assert gitignore.read_text() == "*.pyc\ntarget/\nwarehouse/\n"


# ---------------------------------------------------------------- 2. malformed --vars


@pytest.mark.parametrize("value", ["{a: [", "a: b: c", "{day: 2024-05-01", "[1, 2]", "42"])
@pytest.mark.parametrize("where", ["before", "after"])
def test_malformed_vars_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    value: str,
    where: str,
) -> None:
    root = make_project(tmp_path, {"models/m.sql": MODEL})
    command = ["--vars", value, "compile"] if where == "before" else ["compile", "--vars", value]
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), *command)
    assert_clean_failure(code, output, "--vars", "expected a YAML mapping")
    assert not (root / "target").exists()


# ---------------------------------------------------------------- 3. repeated config keyword


@pytest.mark.parametrize(
    ("model", "line"),
    [
        ("{{ config(materialized='table', materialized='view') }}\nSELECT 1 AS a\n", 1),
        (
            "-- m\n{{ config(primary_key='a',\n   merge_engine='deduplicate', primary_key='b') }}\n"
            "SELECT 1 AS a\n",
            3,
        ),
    ],
    ids=["one-line", "second-line"],
)
def test_repeated_config_keyword(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model: str,
    line: int,
) -> None:
    root = make_project(tmp_path, {"models/m.sql": model})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile")
    assert_clean_failure(
        code, output, f"models/m.sql:{line}", "given twice", "give each keyword once"
    )
    assert not (root / "target").exists()


# ---------------------------------------------------------------- 4. profiles.yml shapes


@pytest.mark.parametrize(
    ("profiles", "expected"),
    [
        (
            "- demo\n- dev\n",
            "expected a mapping of profile name -> {target, outputs}, found a list",
        ),
        ("just a string\n", "found a string"),
        ("demo: hello\n", "[demo] expected a mapping with 'target' and 'outputs', found a string"),
        ("demo:\n  target: dev\n", "[demo.outputs] profile 'demo' has no 'outputs'"),
        ("demo:\n  target: dev\n  outputs: [dev]\n", "[demo.outputs] expected a mapping of target"),
        ("demo:\n  target: prod\n  outputs:\n    dev: {}\n", "target 'prod' not found"),
        ("demo:\n  outputs:\n    prod: {}\n", "the profile has no 'target'"),
        (
            "demo:\n  target: [dev]\n  outputs:\n    dev: {}\n",
            "[demo.target] expected a target name",
        ),
        (
            "demo:\n  target: dev\n  outputs:\n    dev: local\n",
            "[demo.outputs.dev] expected a mapping of settings (accepted keys: master",
        ),
        (
            "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog_type: glue\n",
            "[demo.outputs.dev.catalog_type]",
        ),
        ("other:\n  target: dev\n", "profile 'demo' not found; profiles here: other"),
        ("demo:\n  target: dev\n  outputs: {dev: {}\n", "profiles.yml:4: not valid YAML"),
        ("demo: {{ nope }}\n", "template failed to render"),
    ],
    ids=[
        "list",
        "string",
        "profile-string",
        "no-outputs",
        "outputs-list",
        "missing-target",
        "no-target-no-dev",
        "target-list",
        "output-string",
        "bad-value",
        "missing-profile",
        "yaml-error",
        "undefined",
    ],
)
def test_profiles_shapes(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    profiles: str,
    expected: str,
) -> None:
    root = make_project(tmp_path, {"models/m.sql": MODEL, "profiles.yml": profiles})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile")
    assert_clean_failure(code, output, "profiles.yml", expected)
    assert not (root / "target").exists()


# ---------------------------------------------------------------- 5. env_var() secrets


SECRETS = [
    'pa"ss',
    "back\\slash",
    "key: value",
    "it's # no comment",
    "{x: [1",
    "- item",
    "  spaced  ",
    "multi\nline",
]

SECRET_PROFILES = """\
demo:
  target: dev
  outputs:
    dev:
      catalog_properties:
        bare: {{ env_var('LW_SECRET') }}
        quoted: "{{ env_var('LW_SECRET') }}"
        single: '{{ env_var('LW_SECRET') }}'
        inside: "jdbc://u:{{ env_var('LW_SECRET') }}@host"
"""


@pytest.mark.parametrize("secret", SECRETS)
def test_env_var_values_cannot_break_yaml(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, secret: str
) -> None:
    monkeypatch.setenv("LW_SECRET", secret)
    root = make_project(tmp_path, {"profiles.yml": SECRET_PROFILES})
    output = load_output(root / "profiles.yml", "demo", project_root=root)
    assert output.catalog_properties == {
        "bare": secret,
        "quoted": secret,
        "single": secret,
        "inside": f"jdbc://u:{secret}@host",
    }


@pytest.mark.parametrize(
    "broken",
    [
        "      bad: [\n",  # YAML syntax error after the secret
        "      catalog_type: {{ env_var('LW_SECRET') }}\n",  # a validation error on the secret
        "      master: [{{ env_var('LW_SECRET') }}\n",
    ],
    ids=["yaml", "validation", "yaml-around-secret"],
)
def test_errors_never_echo_the_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, broken: str
) -> None:
    secret = 'S3cr3t"\\: value'
    monkeypatch.setenv("LW_SECRET", secret)
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n"
        "      uri: {{ env_var('LW_SECRET') }}\n" + broken
    )
    root = make_project(tmp_path, {"models/m.sql": MODEL, "profiles.yml": profiles})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile")
    assert_clean_failure(code, output, "profiles.yml")
    assert "S3cr3t" not in output


def test_error_in_load_output_keeps_the_secret_out_of_the_exception(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LW_SECRET", "S3cr3t")
    root = make_project(tmp_path, {"profiles.yml": "demo: {{ env_var('LW_SECRET') }}: [\n"})
    with pytest.raises(ConfigError) as caught:
        load_output(root / "profiles.yml", "demo")
    assert "S3cr3t" not in str(caught.value)


# ---------------------------------------------------------------- 6. --target/--vars after


@pytest.mark.parametrize(
    "command",
    [
        ["compile"],
        ["ls"],
        ["run"],
        ["build"],
        ["test"],
        ["seed"],
        ["debug"],
        ["show", "m"],
        ["lineage", "m"],
    ],
    ids=lambda c: c[0],
)
def test_target_after_the_subcommand(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: list[str],
) -> None:
    """The profile is read before Spark starts: an unknown target proves the option is used."""
    root = make_project(tmp_path, {"models/m.sql": MODEL})
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(root), *command, "--target", "prod"
    )
    assert_clean_failure(code, output, "target 'prod' not found in profile 'demo'; targets: dev")


@pytest.mark.parametrize(
    "args",
    [
        ["compile", "--vars", "{n: 42}"],
        ["compile", "--target", "dev", "--vars", "{n: 42}"],
        ["--vars", "{n: 7}", "compile", "--vars", "{n: 42}"],  # after the command wins
        ["--target", "nope", "compile", "-t", "dev", "--vars", "{n: 42}"],
    ],
    ids=["vars", "target-and-vars", "after-wins", "target-after-wins"],
)
def test_target_and_vars_after_the_subcommand_are_used(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
) -> None:
    root = make_project(tmp_path, {"models/m.sql": MODEL})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), *args)
    assert code == 0, output
    assert "42 AS n" in (root / "target/compiled/m/table.sql").read_text()


# ---------------------------------------------------------------- 7. a selector choosing nothing


@pytest.mark.parametrize(
    ("selector", "hint"),
    [
        ("tag:nope", "tags in this project: daily"),
        ("path:models/nope", "give a folder or file under the project"),
    ],
)
@pytest.mark.parametrize("command", ["compile", "ls", "run"])
def test_selector_matching_nothing_exits_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    selector: str,
    hint: str,
    command: str,
) -> None:
    root = make_project(tmp_path, {"models/m.sql": MODEL})
    code, output = run_main(
        monkeypatch, capsys, "--project-dir", str(root), command, "-s", selector
    )
    assert_clean_failure(
        code, output, f"selector '{selector}' matches no model", hint, "exit code 2"
    )
    assert not (root / "target").exists()


# ---------------------------------------------------------------- 9. seed files


ORDERS_CSV = "id,name\n1,Ada\n2,Grace\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"seeds/types.yml": "- name: orders\n"}, "seeds/types.yml: [seeds] expected `seeds:`"),
        ({"seeds/types.yml": "seeds:\n  orders: {id: int}\n"}, "[seeds] expected `seeds:`"),
        (
            {"seeds/types.yml": "seeds:\n  - column_types: {id: int}\n"},
            "[seeds[0]] each seeds entry is a mapping with a 'name'",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: orders\n    column_types: [id]\n"},
            "[seeds[0].column_types] expected a mapping of column -> type",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: orders\n    column_types: {id: integr}\n"},
            "[seeds[0].column_types.id] 'integr' is not a Spark SQL type; expected one like int",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: orders\n    column_types: {idd: int}\n"},
            "[seeds[0].column_types.idd] column 'idd' is not in the header of orders.csv "
            "(columns: id, name)",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: orders\n    column_type: {id: int}\n"},
            "[seeds[0].column_type] unknown key 'column_type'. Did you mean 'column_types'? "
            "Accepted: name, column_types",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: ordres\n"},
            "[seeds[0].name] seed 'ordres' has no CSV file; seeds: orders",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: orders\n   column_types: {}\n"},
            "seeds/types.yml:3: invalid YAML",
        ),
        (
            {"seeds/types.yml": b"seeds: [{name: \xff}]\n"},
            "seeds/types.yml:1: byte 0xff is not UTF-8; save the file as UTF-8",
        ),
        (
            {"seeds/orders.csv": b"id,name\n1,Ada\n2,Gr\xe2ce\n"},
            "seeds/orders.csv:3: byte 0xe2 is not UTF-8; save the file as UTF-8",
        ),
        ({"seeds/orders.csv": ""}, "seeds/orders.csv:1: the first line must be a header"),
        (
            {
                "seeds/types.yml": "seeds:\n  - name: orders\n    config: {column_types: {id: integr}}\n"
            },
            "[seeds[0].config.column_types.id] 'integr' is not a Spark SQL type",
        ),
        (
            {"seeds/types.yml": "seeds:\n  - name: orders\n    config: {delimiter: ';'}\n"},
            "[seeds[0].config] the only config key of a seed lakewide reads is column_types",
        ),
        (
            {"seeds/orders.csv": "id,name,id\n1,Ada,2\n"},
            "seeds/orders.csv:1: column 'id' appears twice in the header",
        ),
    ],
    ids=[
        "list",
        "mapping",
        "no-name",
        "types-list",
        "unknown-type",
        "unknown-column",
        "unknown-key",
        "no-csv",
        "yaml",
        "yml-not-utf8",
        "csv-not-utf8",
        "empty-csv",
        "config-bad-type",
        "config-unknown-key",
        "duplicate-column",
    ],
)
@pytest.mark.parametrize("command", ["seed", "build"])
def test_bad_seed_files(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    files: dict[str, str | bytes],
    expected: str,
    command: str,
) -> None:
    """Seed files are checked before the warehouse is locked or Spark starts (no JVM here)."""
    root = make_project(tmp_path, {"seeds/orders.csv": ORDERS_CSV})
    for relative, content in files.items():
        path = root / relative
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert_clean_failure(code, output, expected)
    assert not (root / "warehouse").exists()


def test_seed_with_a_bom_and_types_passes_the_checks(tmp_path: Path) -> None:
    from lakewide.project.seeds import find_seeds
    from tests.support.project_factory import manifest_of

    root = make_project(
        tmp_path,
        {
            "seeds/orders.csv": "\ufeffid,name\n1,Ada\n",
            "seeds/types.yml": "seeds:\n  - name: orders\n    column_types: {id: 'decimal(10,2)'}\n",
        },
    )
    manifest = manifest_of(root)
    [seed] = find_seeds(manifest.project, manifest.output)
    assert seed.column_types == {"id": "decimal(10,2)"}
    assert seed.types == {"id": "decimal(10,2)", "name": "string"}  # declared, else inferred
    (root / "seeds/types.yml").write_text(  # dbt's spelling
        "seeds:\n  - name: orders\n    config:\n      column_types: {id: bigint}\n"
    )
    [seed] = find_seeds(manifest.project, manifest.output)
    assert seed.types == {"id": "bigint", "name": "string"}


# ---------------------------------------------------------------- 9b. files that are not UTF-8


@pytest.mark.parametrize(
    ("relative", "content", "expected"),
    [
        ("models/m.sql", b"SELECT 1 AS a,\n  '\xe9t\xe9' AS b\n", "models/m.sql:2: byte 0xe9"),
        ("macros/m.sql", b"{% macro x() %}\xff{% endmacro %}", "macros/m.sql:1: byte 0xff"),
        ("models/m.yml", b"models:\n  - name: m\n    description: \xe9\n", "m.yml:3: byte 0xe9"),
        ("models/sources.yml", b"sources: []\n# \xff\n", "sources.yml:2: byte 0xff"),
        ("data-tests/t.sql", b"SELECT * FROM {{ ref('m') }} -- \xff\n", "t.sql:1: byte 0xff"),
        ("models/unit.yml", b"unit_tests: []\n\n# \xff\n", "unit.yml:3: byte 0xff"),
        ("profiles.yml", b"# \xff\n", "profiles.yml:1: byte 0xff"),
        ("pyproject.toml", b'[project]\nname = "d\xe9mo"\n', "pyproject.toml:2: byte 0xe9"),
    ],
    ids=["model", "macro", "properties", "sources", "data-test", "unit-tests", "profiles", "toml"],
)
@pytest.mark.parametrize("command", ["compile", "test"])
def test_files_not_utf8_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    relative: str,
    content: bytes,
    expected: str,
    command: str,
) -> None:
    """A project file in another encoding names the file, the line and the byte (no
    traceback, exit 2, nothing written), whichever command reads it first."""
    root = make_project(tmp_path, {"models/m.sql": "SELECT 1 AS a\n"})
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_bytes(content)
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), command)
    assert_clean_failure(code, output, expected, "is not UTF-8; save the file as UTF-8")
    assert not (root / "target" / "compiled").exists()
    assert not (root / "warehouse").exists()


# ---------------------------------------------------------------- 10. show and debug


def test_show_unknown_model_exits_2_before_spark(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_project(tmp_path, {"models/m.sql": MODEL})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "show", "nope")
    assert_clean_failure(code, output, "no model named 'nope'; models: m")


SHOW_MODELS = {
    "models/t.sql": "{{ config(materialized='table') }}\nSELECT 1 AS one\n",
    "models/over_t.sql": "{{ config(materialized='view') }}\nSELECT * FROM {{ ref('t') }}\n",
    "models/plain.sql": "{{ config(materialized='view') }}\nSELECT 1 AS one\n",
    "models/broken.sql": "{{ config(materialized='view') }}\nSELECT no_such_column\n",
}


@pytest.fixture
def session_adapter(monkeypatch: pytest.MonkeyPatch, spark: Any) -> None:
    """The CLI's adapters use the test session (and leave it running)."""
    from lakewide.spark import adapter as module

    real = module.SparkAdapter
    monkeypatch.setattr(
        module,
        "SparkAdapter",
        lambda output, app_name="lakewide": real(output, app_name, spark=spark),
    )


@pytest.mark.spark
@pytest.mark.parametrize(
    ("model", "code", "expected"),
    [
        (
            "t",
            2,
            "model t: lw.bad_inputs_show.t does not exist yet (never built); run "
            "`lakewide run -s t`",
        ),
        ("over_t", 2, "TABLE_OR_VIEW_NOT_FOUND"),
        ("plain", 0, "one"),
        ("broken", 1, "model broken: [UNRESOLVED_COLUMN"),
    ],
    ids=["unbuilt-table", "view-over-unbuilt", "session-view", "view-that-fails"],
)
def test_show_views_and_unbuilt_models(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    warehouse: Path,
    session_adapter: None,
    model: str,
    code: int,
    expected: str,
) -> None:
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        f"      warehouse: {warehouse}\n      namespace: bad_inputs_show\n"
    )
    root = make_project(tmp_path, {**SHOW_MODELS, "profiles.yml": profiles})
    got, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "show", model)
    assert_clean_failure(got, output, expected, exit_code=code)
    if model == "over_t":
        assert "build what view over_t reads first with `lakewide run -s +over_t`" in output


@pytest.mark.spark
def test_debug_right_after_init(tmp_path: Path) -> None:
    """A fresh project has no warehouse yet: debug says so and passes (its own JVM)."""
    env = {k: v for k, v in os.environ.items() if k != "LAKEWIDE_PROFILES_DIR"}
    command = [sys.executable, "-m", "lakewide"]
    done = subprocess.run(
        [*command, "init", "shop"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(
        [*command, "debug"],
        cwd=tmp_path / "shop",
        env=quick_jvm(env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    assert "does not exist yet (the first `lakewide seed` or `lakewide build` creates it)" in output
    assert "all checks passed" in output
    assert not (tmp_path / "shop" / "warehouse").exists()


# ---------------------------------------------------------------- 8. WITH, ORDER BY, LIMIT


WIDE_CONFIG = "{{ config(merge_engine='partial_update', primary_key='k') }}\n"
WIDE_SOURCES = "sources:\n  - name: raw\n    tables:\n      - name: a\n      - name: b\n"


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT k, x FROM {{ source('raw', 'a') }} UNION ALL SELECT k, y FROM {{ source('raw', 'b') }}"
            " ORDER BY k",
            "ORDER BY on the UNION ALL is not supported",
        ),
        (
            "SELECT k, x FROM {{ source('raw', 'a') }} UNION ALL SELECT k, y FROM {{ source('raw', 'b') }}"
            " LIMIT 10",
            "LIMIT on the UNION ALL is not supported",
        ),
        (
            "SELECT k, x FROM {{ source('raw', 'a') }} UNION ALL (SELECT k, y FROM "
            "{{ source('raw', 'b') }} LIMIT 10)",
            "LIMIT on UNION ALL branch 2 is not supported",
        ),
        (
            "SELECT k, x FROM {{ source('raw', 'a') }} ORDER BY k LIMIT 5",
            "ORDER BY on UNION ALL branch 1 is not supported",
        ),
        (
            "WITH RECURSIVE r AS (SELECT k, x FROM {{ source('raw', 'a') }}) SELECT k, x FROM r",
            "WITH RECURSIVE cannot be split into sources",
        ),
        (
            "WITH w AS (SELECT k, x FROM {{ source('raw', 'a') }}) SELECT k, x FROM w UNION ALL "
            "SELECT k, y FROM (WITH w AS (SELECT k, y FROM {{ source('raw', 'b') }}) SELECT * FROM w) s",
            "CTE 'w' is defined twice",
        ),
    ],
    ids=["order-by", "limit", "branch-limit", "single-order-by", "recursive", "shadowed"],
)
def test_union_clauses_refused(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    sql: str,
    expected: str,
) -> None:
    root = make_project(
        tmp_path, {"models/w.sql": WIDE_CONFIG + sql + "\n", "models/sources.yml": WIDE_SOURCES}
    )
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "compile")
    assert_clean_failure(code, output, "models/w.sql", expected)
    assert not (root / "target").exists()


def test_top_level_with_compiles_to_standalone_branches(tmp_path: Path) -> None:
    """Each branch reads the CTEs it uses as derived tables: the bootstrap union holds no WITH
    (Spark refuses one inside a union) and each MERGE stages only its own source."""
    from lakewide.compiler import compile_model
    from lakewide.vocabulary.dialect import to_sql
    from tests.support.project_factory import manifest_of

    root = make_project(
        tmp_path,
        {
            "models/sources.yml": WIDE_SOURCES,
            "models/w.sql": (
                WIDE_CONFIG + "WITH a1 AS (SELECT k, x FROM {{ source('raw', 'a') }}),\n"
                "     b1 AS (SELECT k, y FROM {{ source('raw', 'b') }} WHERE y > 0)\n"
                "SELECT k, x, CAST(NULL AS INT) AS y FROM a1\n"
                "UNION ALL\n"
                "SELECT k, CAST(NULL AS INT), y FROM b1\n"
            ),
        },
    )
    compiled = compile_model(manifest_of(root).models["w"])
    bootstrap = to_sql(compiled.bootstrap, pretty=False)
    assert "a1 AS (" not in bootstrap and "b1 AS (" not in bootstrap  # no user CTE left
    assert "FROM (SELECT k, x FROM lw.raw.a) AS a1" in bootstrap
    assert "FROM (SELECT k, y FROM lw.raw.b WHERE y > 0) AS b1" in bootstrap
    first, second = (to_sql(m.staging(), pretty=False) for m in compiled.merges)
    assert "lw.raw.a" in first and "lw.raw.b" not in first
    assert "lw.raw.b" in second and "lw.raw.a" not in second
    assert [m.name for m in compiled.merges] == ["a", "b"]


@pytest.mark.spark
def test_debug_catalog_that_does_not_answer(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    session_adapter: None,
) -> None:
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: not_configured\n"
        "      catalog_type: jdbc\n      uri: jdbc:postgresql://127.0.0.1:9/x\n"
        "      warehouse: wh\n"
    )
    root = make_project(tmp_path, {"profiles.yml": profiles})
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "debug")
    assert_clean_failure(
        code,
        output,
        "catalog not_configured (jdbc, jdbc:postgresql://127.0.0.1:9/x) did not answer",
        "check the profile's catalog_type, uri and warehouse",
    )


@pytest.mark.spark
def test_top_level_with_runs_bootstrap_then_incremental(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    warehouse: Path,
    spark: Any,
    session_adapter: None,
) -> None:
    """The inlined CTEs run on Spark: the bootstrap union, then one source's MERGE."""
    raw, out = "bad_inputs_cte_raw", "bad_inputs_cte"
    profiles = (
        "demo:\n  target: dev\n  outputs:\n    dev:\n      catalog: lw\n"
        f"      warehouse: {warehouse}\n      namespace: {out}\n"
    )
    sources = (
        f"sources:\n  - name: raw\n    schema: {raw}\n    tables:\n"
        "      - name: a\n      - name: b\n"
    )
    root = make_project(
        tmp_path,
        {
            "profiles.yml": profiles,
            "models/sources.yml": sources,
            "models/w.sql": (
                WIDE_CONFIG + "WITH a1 AS (SELECT k, x FROM {{ source('raw', 'a') }}),\n"
                "     b1 AS (SELECT k, y FROM {{ source('raw', 'b') }} WHERE y > 0)\n"
                "SELECT k, x, CAST(NULL AS INT) AS y FROM a1\n"
                "UNION ALL\n"
                "SELECT b1.k, CAST(NULL AS STRING), b1.y FROM b1 JOIN a1 ON a1.k = b1.k\n"
            ),
        },
    )
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lw.{raw}")
    spark.sql(f"CREATE TABLE lw.{raw}.a (k INT, x STRING) USING iceberg")
    spark.sql(f"CREATE TABLE lw.{raw}.b (k INT, y INT) USING iceberg")
    spark.sql(f"INSERT INTO lw.{raw}.a VALUES (1, 'one'), (2, 'two')")
    spark.sql(f"INSERT INTO lw.{raw}.b VALUES (1, 10), (2, 0)")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert code == 0 and "bootstrap" in output, output
    spark.sql(f"INSERT INTO lw.{raw}.b VALUES (2, 20)")
    code, output = run_main(monkeypatch, capsys, "--project-dir", str(root), "run")
    assert code == 0 and "incremental" in output, output
    rows = sorted(tuple(r) for r in spark.table(f"lw.{out}.w").collect())
    assert rows == [(1, "one", 10), (2, "two", 20)]

"""``lakewide.union_sources``: a many-source model written from the sources' column lists,
rendered and compiled without a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.compiler import compile_model
from lakewide.project.manifest import Manifest
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError
from tests.support.project_factory import make_project, manifest_of

SOURCES = """\
sources:
  - name: s
    tables:
      - name: a
        columns:
          - {name: k, data_type: bigint}
          - {name: x, data_type: string}
          - {name: shared, data_type: int}
          - {name: ts, data_type: timestamp}
      - name: b
        columns:
          - {name: y, data_type: 'decimal(10,2)'}
          - {name: shared, data_type: int}
      - name: c
        columns:
          - {name: z}
          - name: shared
            data_type: bigint
"""
CONFIG = "{{ config(merge_engine='partial_update', primary_key='k', sequence_field='ts') }}\n"


def project(tmp_path: Path, call: str, sources: str = SOURCES) -> Manifest:
    files = {"models/sources.yml": sources, "models/w.sql": CONFIG + "{{ " + call + " }}\n"}
    return manifest_of(make_project(tmp_path, files))


def owners(manifest: Manifest) -> tuple[list[str], list[dict[str, str]]]:
    """The model's columns and, per branch, its owned columns as SQL (what the compiler sees)."""
    compiled = compile_model(manifest.models["w"])
    assert compiled.model is not None
    return compiled.model.columns, [
        {c: e.sql(DIALECT) for c, e in b.owned.items()} for b in compiled.model.branches
    ]


def test_each_source_owns_its_yaml_columns_and_shares_one(tmp_path: Path) -> None:
    manifest = project(
        tmp_path,
        "lakewide.union_sources([source('s','a'), source('s','b')], key='k', sequence='ts')",
    )
    assert manifest.models["w"].sources == [("s", "a"), ("s", "b")]
    columns, owned = owners(manifest)
    assert columns == ["k", "x", "shared", "y", "ts"]
    # a's x is typed as the NULLs b would write for it (the type a's YAML declares)
    assert owned == [
        {"k": "k", "x": "CAST(x AS STRING)", "shared": "shared", "ts": "ts"},
        {"k": "k", "shared": "shared", "y": "y", "ts": "ts"},
    ]
    # narrow: the first branch names every column, the second only its own
    first, second = manifest.models["w"].sql.split(" UNION ALL BY NAME ")
    assert "CAST(NULL AS DECIMAL(10, 2)) AS y" in first
    assert second.startswith("SELECT k, shared, y, ts FROM")


def test_it_compiles_to_what_the_hand_written_model_compiles_to(tmp_path: Path) -> None:
    macro = project(
        tmp_path / "macro",
        "lakewide.union_sources([source('s','a'), source('s','b')], key='k', sequence='ts')",
    )
    by_hand = project(
        tmp_path / "hand",
        "'SELECT k, CAST(x AS STRING) AS x, shared, CAST(NULL AS DECIMAL(10,2)) AS y, ts "
        "FROM ' ~ source('s','a') ~ "
        "' UNION ALL SELECT k, CAST(NULL AS STRING), shared, y, ts FROM ' ~ source('s','b')",
    )
    ours = compile_model(macro.models["w"]).shown(all_plans=True)
    assert "bootstrap.sql" in ours and "merge_all.sql" in ours
    assert ours == compile_model(by_hand.models["w"]).shown(all_plans=True)


def test_columns_given_in_the_model_and_types_chosen_there(tmp_path: Path) -> None:
    call = (
        "lakewide.union_sources([source('s','a'), {'relation': source('s','c'), "
        "'columns': ['z', 'shared']}, {'relation': 'lw.other.t', 'columns': {'q': 'ARRAY<INT>'}}],"
        " key=['k'], sequence=['ts'], types={'z': 'DOUBLE', 'shared': 'BIGINT'})"
    )
    columns, owned = owners(project(tmp_path, call))
    assert columns == ["k", "x", "shared", "z", "q", "ts"]
    # a's INT column is widened to the type chosen for it; c's BIGINT is taken as it is
    assert owned[0]["shared"] == "CAST(shared AS BIGINT)" and owned[1]["shared"] == "shared"
    assert owned[2] == {"k": "k", "q": "q", "ts": "ts"}


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (  # c's z has no data_type and a does not own it
            "lakewide.union_sources([source('s','a'), source('s','c')], key='k', types="
            "{'shared': 'BIGINT'})",
            "column 'z' of source('s', 'c') (models/sources.yml) has no data_type",
        ),
        (
            "lakewide.union_sources([source('s','a'), source('s','c')], key='k', "
            "types={'z': 'INT'})",
            "column 'shared' has conflicting types: INT in source('s', 'a') "
            "(models/sources.yml); BIGINT in source('s', 'c') (models/sources.yml)",
        ),
        (
            "lakewide.union_sources([source('s','a'), source('s','b')], key='k', "
            "types={'y': 'no such type'})",
            "data_type 'no such type' of column 'y' (types= of the model) is not a Spark SQL",
        ),
        (
            "lakewide.union_sources([source('s','a'), 'lw.other.t'], key='k')",
            "lw.other.t has no column list; declare its `columns:`",
        ),
        ("lakewide.union_sources([source('s','a')], key=[1])", "key must be a column name"),
        (
            "lakewide.union_sources([source('s','a')], key='k', types={'zz': 'INT'})",
            "types= names 'zz', which no source lists; the sources' columns are: x, shared",
        ),
        (
            "lakewide.union_sources([{'from': source('s','a')}], key='k')",
            "a mapping item takes 'relation' and 'columns' (found from)",
        ),
    ],
)
def test_errors_name_the_source_the_column_and_what_is_accepted(
    tmp_path: Path, call: str, says: str
) -> None:
    with pytest.raises(ConfigError) as err:
        project(tmp_path, call)
    assert says in str(err.value).replace(str(tmp_path) + "/", "")
    assert "models/w.sql" in str(err.value)


def test_yaml_columns_must_be_named_mappings(tmp_path: Path) -> None:
    sources = "sources:\n  - name: s\n    tables:\n      - name: a\n        columns: [x]\n"
    with pytest.raises(ConfigError, match=r"columns\[0\] of source\('s', 'a'\) in .*sources.yml"):
        project(tmp_path, "lakewide.union_sources([source('s','a')], key='k')", sources)


def test_many_sources_from_a_loop_each_own_only_their_columns(tmp_path: Path) -> None:
    tables = "".join(
        f"      - name: t{i}\n        columns:\n"
        + "".join(f"          - {{name: t{i}_c{j}, data_type: bigint}}\n" for j in range(16))
        for i in range(16)
    )
    files = {
        "models/sources.yml": f"sources:\n  - name: s\n    tables:\n{tables}",
        "models/w.sql": CONFIG.replace("'ts'", "'seq'")
        + "{% set tables = [] %}{% for i in range(16) %}"
        "{% set _ = tables.append(source('s', 't' ~ i)) %}{% endfor %}"
        "{{ lakewide.union_sources(tables, key='k', sequence='seq') }}\n",
    }
    columns, owned = owners(manifest_of(make_project(tmp_path, files)))
    assert len(columns) == 1 + 16 * 16 + 1
    assert [sorted(o) for o in owned] == [
        sorted(["k", "seq", *(f"t{i}_c{j}" for j in range(16))]) for i in range(16)
    ]


def test_a_view_written_with_the_macro_sends_the_positional_union(tmp_path: Path) -> None:
    """Spark SQL has no UNION ALL BY NAME: a view (or table) over the macro is created from
    the UNION ALL with every NULL written out."""
    call = "lakewide.union_sources([source('s','a'), source('s','b')], key='k', sequence='ts')"
    files = {
        "models/sources.yml": SOURCES,
        "models/v.sql": "{{ config(materialized='view') }}\n{{ " + call + " }}\n",
    }
    node = manifest_of(make_project(tmp_path, files)).models["v"]
    assert "UNION ALL BY NAME" in node.sql
    [statement] = compile_model(node).files().values()
    assert "BY NAME" not in statement
    assert "UNION ALL SELECT k, CAST(NULL AS STRING), shared, y, ts FROM" in " ".join(
        statement.split()
    )

"""A small project whose key table has two sequence groups, with unit tests of it."""

from __future__ import annotations

SOURCES = """\
sources:
  - name: src
    tables:
      - name: s1
        columns:
          - {name: k, data_type: bigint}
          - {name: g1, data_type: bigint}
      - name: s2
"""

GROUPS_MODEL = """\
{{ config(merge_engine='partial_update', primary_key='k',
          sequence_groups={'g1': ['a', 'b'], 'g2': ['c']}) }}
SELECT k, a, b, g1, CAST(NULL AS STRING) AS c, CAST(NULL AS BIGINT) AS g2
FROM {{ source('src', 's1') }}
UNION ALL
SELECT k, CAST(NULL AS STRING), CAST(NULL AS STRING), CAST(NULL AS BIGINT), c, g2
FROM {{ source('src', 's2') }}
"""

# a late record (older group sequence, arriving after the newer one) does not overwrite its
# group, not even with its NULLs; the other group is set by its own source
GROUP_TESTS = """\
unit_tests:
  - name: late_record_keeps_the_newer_group
    model: m
    given:
      - input: source('src', 's1')
        rows:
          - {k: 1, a: new, b: new, g1: 2}
          - {k: 1, a: old, b: null, g1: 1}
      - input: source('src', 's2')
        rows:
          - {k: 1, c: x, g2: 5}
    expect:
      rows:
        - {k: 1, a: new, b: new, g1: 2, c: x, g2: 5}
  - name: incremental_late_record_keeps_the_stored_group
    model: m
    given:
      - input: this
        rows:
          - {k: 1, a: new, b: new, g1: 2, c: x, g2: 5}
      - input: source('src', 's1')
        format: csv
        rows: |
          k,a,b,g1
          1,old,,1
          2,two,,7
      - input: source('src', 's2')
        rows:
          - {k: 1, c: y, g2: 6}
    expect:
      rows:
        - {k: 1, a: new, b: new, g1: 2, c: y, g2: 6}
        - {k: 2, a: two, b: null, g1: 7, c: null, g2: null}
  - name: incremental_plan_into_an_empty_table
    model: m
    plan: incremental
    given:
      - input: source('src', 's1')
        rows:
          - {k: 1, a: new, b: new, g1: 2}
          - {k: 1, a: old, b: null, g1: 1}
    expect:
      rows:
        - {k: 1, a: new, b: new, g1: 2, c: null, g2: null}
  - name: wrong_expectation
    model: m
    given:
      - input: source('src', 's1')
        rows:
          - {k: 1, a: new, b: new, g1: 2}
          - {k: 1, a: old, b: null, g1: 1}
    expect:
      rows:
        - {k: 1, a: old, b: null}
  - name: expect_rows_name_different_columns
    model: m
    given:
      - input: source('src', 's1')
        format: csv
        rows: |
          k,a,b,g1
          1,x,y,1
          2,z,w,1
    expect:
      rows:
        - {k: 1, a: x, b: y}
        - {k: 2, a: z}  # b not named here: NULL expected (dbt's rule), w produced
"""


# a view (a session view on the hadoop catalog) and a table over it
VIEW_MODELS = {
    "models/v.sql": "{{ config(materialized='view') }}\nSELECT k, a FROM {{ source('src', 's1') }} WHERE a IS NOT NULL\n",
    "models/t.sql": "{{ config(materialized='table') }}\nSELECT a, COUNT(*) AS n FROM {{ ref('v') }} GROUP BY a\n",
    "models/view_tests.yml": """\
unit_tests:
  - name: view_filters
    model: v
    given:
      - input: source('src', 's1')
        rows: [{k: 1, a: x}, {k: 2}]
    expect:
      rows: [{k: 1, a: x}]
  - name: table_over_a_view
    model: t
    given:
      - input: ref('v')
        rows: [{k: 1, a: x}, {k: 2, a: x}, {k: 3, a: y}]
    expect:
      rows: [{a: x, n: 2}, {a: y, n: 1}]
""",
}


def group_project() -> dict[str, str]:
    """Files of the project (for tests.support.project_factory.make_project)."""
    return {
        "models/sources.yml": SOURCES,
        "models/m.sql": GROUPS_MODEL,
        "models/unit_tests.yml": GROUP_TESTS,
        **VIEW_MODELS,
    }

"""A relation's printed name equals what sqlglot prints for its table (the fast path for names
that need no quotes must not change a single character)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lakewide.project.nodes import Relation
from lakewide.vocabulary.dialect import DIALECT

NAMES = st.one_of(
    st.from_regex(r"[_a-zA-Z][_a-zA-Z0-9]{0,8}", fullmatch=True),
    st.text(min_size=1, max_size=6),
    st.sampled_from(["select", "order", "1a", "a b", "a`b", "Ünï", "x-y", "_"]),
)


@given(catalog=st.one_of(st.just(""), NAMES), namespace=st.one_of(st.just(""), NAMES), name=NAMES)
def test_the_printed_name_is_sqlglots(catalog: str, namespace: str, name: str) -> None:
    relation = Relation(catalog, namespace, name)
    assert str(relation) == relation.table().sql(DIALECT)

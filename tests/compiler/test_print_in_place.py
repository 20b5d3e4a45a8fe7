"""``compile`` prints a model's trees themselves, run plans first, instead of copies
(``CompiledModel.files(in_place=True)``): for every fixture model, with and without a
changelog, the text is the one printed from copies."""

from __future__ import annotations

import pytest

from lakewide.compiler import PlanContext, compile_model
from tests.compiler.fixtures import load_cases
from tests.compiler.test_rules import ids, node_for

CASES = [
    case
    for name in ("build_bootstrap.sql", "build_merge.sql", "build_combined.sql")
    for case in load_cases(name)
]


@pytest.mark.parametrize("produces", [False, True])
@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_in_place_printing_prints_what_copies_print(case, produces: bool) -> None:
    context = PlanContext(produces=produces)
    copies = compile_model(node_for(case), context).files(plans=True)
    in_place = compile_model(node_for(case), context).files(plans=True, in_place=True)
    assert in_place == copies
    assert any(name.startswith("plans/") for name in copies)

"""The bootstrap's fold by the table's width: a model whose sources fold apart folds the union
of its branches up to ``UNION_BOOTSTRAP_COLUMNS`` stored columns, the per-source pre-folds
above (benchmarks/fold_paths.py: the crossover follows the columns, not the sources); a
restatement folds as the bootstrap does."""

from __future__ import annotations

import pytest

from lakewide.compiler.folds.build_prefolds import (
    UNION_BOOTSTRAP_COLUMNS,
    bootstraps_apart,
    prefolds,
)
from lakewide.compiler.model.ordering import BRANCH_COLUMN
from lakewide.compiler.statements.build_bootstrap import bootstrap_query
from lakewide.compiler.statements.build_restate import restate_fold
from lakewide.vocabulary.dialect import to_sql
from tests.compiler.folds.test_build_prefolds import CONFIGS, wide


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize(("sources", "columns"), [(8, 4), (16, 2), (10, 4), (4, 10), (2, 1)])
def test_the_bootstrap_folds_the_union_up_to_a_width(
    config: str, sources: int, columns: int
) -> None:
    model = wide(sources, columns, CONFIGS[config])
    assert prefolds(model)  # the batches fold each source apart at every width
    apart = len(model.stored) > UNION_BOOTSTRAP_COLUMNS
    assert bootstraps_apart(model) is apart
    for fold in (bootstrap_query(model), restate_fold(model, None)):
        # the union of the branches tags each row with its source; the pre-folds do not
        assert (BRANCH_COLUMN in to_sql(fold)) is not apart

"""The pre-fold tests' models are narrow (3 x 2): their bootstraps are built from the
pre-folds here, as those of a table wider than ``UNION_BOOTSTRAP_COLUMNS`` are, so that what
the tests check is the pre-folds (tests/compiler/statements/test_bootstrap_width.py checks
the choice by width)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lakewide.compiler.folds import build_prefolds


@pytest.fixture(autouse=True)
def bootstraps_apart() -> Iterator[None]:
    """Every bootstrap of a model whose sources fold apart built from the pre-folds."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_prefolds, "UNION_BOOTSTRAP_COLUMNS", 0)
        yield

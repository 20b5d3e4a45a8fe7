"""``--restate PREDICATE`` of ``run`` and ``build``: the keys of the selected key tables that
the predicate matches, folded again from every source (lakewide.compiler.statements.build_restate),
checked before anything is locked or Spark starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from lakewide.project.manifest import Manifest
from lakewide.vocabulary.errors import UsageError

OPTION = "--restate"


def restate_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--restate PREDICATE``."""
    return click.option(
        OPTION,
        "restate",
        metavar="PREDICATE",
        help="Fold again, from every record of every source, the keys of the selected key "
        "tables that PREDICATE matches (SQL on primary-key or partition columns, e.g. "
        '"order_id BETWEEN 1000 AND 1999"), in one commit after the usual incremental step; '
        "needs --select.",
    )(func)


def check_restate(
    manifest: Manifest,
    names: list[str],
    predicate: str | None,
    select: tuple[str, ...],
    *,
    full_refresh: bool = False,
) -> None:
    """UsageError (exit 2, naming ``--restate``) for a restatement without a selection, with
    ``--full-refresh``, of a model that is no key table, or whose predicate the model does not
    accept. Nothing is read or written."""
    if predicate is None:
        return
    from lakewide.compiler.plans.upstream import compile_in

    if not select:
        raise UsageError(
            f"{OPTION} needs --select (-s) naming the key tables to restate: it never "
            "applies to a whole project"
        )
    if full_refresh:
        raise UsageError(
            f"{OPTION} restates some keys; --full-refresh rebuilds every key: choose one"
        )
    if not names:
        raise UsageError(f"{OPTION}: --select matched no model")
    for name in names:
        compile_in(manifest, manifest.models[name]).restate_predicate(predicate)

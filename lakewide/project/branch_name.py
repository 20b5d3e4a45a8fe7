"""The names of environments' Iceberg branches (lakewide.state.branches), checked without a JVM."""

from __future__ import annotations

import re

MAIN = "main"
#: a branch name lakewide accepts: also a Spark identifier, so it needs no quoting anywhere
BRANCH_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
#: the suffix of the side branch where a branch run stages a model's commits until its
#: changelog table holds their changes (lakewide.run.models.branch_stage); not a name of an
#: environment
STAGE_SUFFIX = "__lw_stage"


def stage_branch(branch: str) -> str:
    """The side branch staging a model's commits of a run on ``branch``."""
    return f"{branch}{STAGE_SUFFIX}"


def is_stage(name: str) -> bool:
    """Whether ``name`` is a staging side branch (hidden from ``branch list``)."""
    return name.endswith(STAGE_SUFFIX)


def check_branch_name(name: str) -> str:
    """``name`` when it can name an environment's branch; else ValueError saying what is."""
    if name == MAIN:
        raise ValueError(
            "main is the production line of every table: name a branch of your own "
            "(e.g. dev_alice); `lakewide publish --branch NAME` moves main to it"
        )
    if not BRANCH_NAME.fullmatch(name):
        raise ValueError(
            f"invalid branch name {name!r}: use a letter, then letters, digits and _ "
            "(at most 64 characters)"
        )
    if is_stage(name):
        raise ValueError(
            f"invalid branch name {name!r}: names ending in {STAGE_SUFFIX} are lakewide's "
            "staging side branches; choose another name"
        )
    return name

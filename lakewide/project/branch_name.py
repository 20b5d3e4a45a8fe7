"""The names of environments' Iceberg branches (lakewide.state.branches), checked without a JVM."""

from __future__ import annotations

import re

MAIN = "main"
#: a branch name lakewide accepts: also a Spark identifier, so it needs no quoting anywhere
BRANCH_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


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
    return name

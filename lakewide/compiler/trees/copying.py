"""Copying sqlglot trees without the parts a builder is about to replace.

A deep copy is the compiler's most expensive step; copying a SELECT only to throw its
projections away doubled the work for every branch.
"""

from __future__ import annotations

from typing import TypeVar

from sqlglot import exp

E = TypeVar("E", bound=exp.Expr)


def copy_without(node: E, key: str) -> E:
    """A deep copy of ``node`` with ``key`` left empty, for the caller to set (the original is
    unchanged)."""
    if node.args.get(key) is None:
        return node.copy()
    kept = node.args[key]
    node.args[key] = None  # in place, so the argument order of the copy stays the same
    try:
        copied = node.copy()
    finally:
        node.args[key] = kept
    return copied

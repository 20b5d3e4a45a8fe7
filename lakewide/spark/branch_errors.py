"""Iceberg's refusals about branches and refs, told as what happened and what to do.

Iceberg says these in one line of Java text ("Cannot override ref, already set snapshot
id=..."), which names neither the table's environment nor a way out. ``branch_refusal`` tells
them apart by their text (their exception classes, IllegalArgumentException and
ValidationException, are shared with unrelated failures, commit conflicts among them) and
returns a BranchError carrying Iceberg's line after lakewide's explanation.
"""

from __future__ import annotations

from lakewide.project.profiles import Output
from lakewide.vocabulary.errors import BranchError

#: the session setting that makes Iceberg read and write tables with write.wap.enabled on a
#: branch; lakewide names branches itself (lakewide.spark.branches) and must not meet it
WAP_BRANCH = "spark.wap.branch"

#: Iceberg's messages about refs: a read pinned to a snapshot next to a branch, two branches
#: named for one write, a ref that is not there
_REF_MESSAGES = (
    "Cannot override ref",
    "Cannot override snapshot",
    "Cannot write to both branch and WAP branch",
    "Cannot set both WAP ID and branch",
    "Can specify only one of snapshot-id",
    "Cannot set neither snapshot-id",
    "Cannot find ref",
)


def branch_refusal(output: Output, text: str) -> BranchError | None:
    """The BranchError for Iceberg's refusal ``text`` (a failed statement's one line), or
    None when ``text`` is not about branches or refs."""
    found = next((m for m in _REF_MESSAGES if m in text), None)
    if found is None:
        return None
    wap = output.spark_conf.get(WAP_BRANCH)
    if wap is not None:
        return BranchError(
            f"Iceberg refused the statement because the profile's spark_conf sets "
            f"{WAP_BRANCH}={wap}, which makes Iceberg read and write every table with "
            "write.wap.enabled on that branch, next to the branch or snapshot lakewide names "
            f"itself. Nothing was committed by this statement. Remove {WAP_BRANCH} from the "
            "profile and choose the branch with `--branch NAME` (or the output's `branch` "
            f"key). Iceberg said: {text}"
        )
    branch = output.branch
    if branch is None:
        return BranchError(
            "Iceberg refused a read or write of a table's ref (a branch or tag): nothing was "
            "committed by this statement. `lakewide branch list` shows each table's branches; "
            f"run again once the ref is back, or drop the branch. Iceberg said: {text}"
        )
    return BranchError(
        f"Iceberg refused a statement of the run on branch {branch}; nothing was committed by "
        "it (an Iceberg commit is atomic), and a model whose table was written without its "
        f"changelog table is completed by the next run on {branch} before it merges "
        f"anything. `lakewide branch list` shows where each table's {branch} stands against "
        f"main; `lakewide run --branch {branch}` again resumes; if it fails the same way, "
        f"`lakewide branch drop {branch}` and run the models on the branch anew (main is "
        f"untouched either way). Iceberg said: {text}"
    )

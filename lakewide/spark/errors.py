"""Spark's and Iceberg's Java failures told in one line, and as lakewide errors.

py4j errors have many types; what is said comes from the Java exception (and its causes).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output, warehouse_path
from lakewide.state.metadata import (
    CorruptMetadataError,
    corrupt_metadata,
    current_metadata_file,
)

_METADATA_FILE = re.compile(r"(\S+\.metadata\.json(?:\.gz)?)")


def unreadable(output: Output, relation: Relation, err: BaseException) -> CorruptMetadataError:
    """The error for a table whose metadata Iceberg failed to load, naming the file."""
    top = short(err)
    found = _METADATA_FILE.search(top)
    detail = _root_cause(err) or _without_packages(top)
    file: Path | str | None = found.group(1) if found else None
    if file is not None:
        detail = detail.replace(f": {file}", "").replace(str(file), "the file")
    elif output.catalog_type == "hadoop":
        warehouse = warehouse_path(output.warehouse)
        file = None if warehouse is None else current_metadata_file(warehouse, relation)
    return corrupt_metadata(relation, file, detail)


def _without_packages(text: str) -> str:
    """``org.apache.iceberg.exceptions.RuntimeIOException: x`` -> ``RuntimeIOException: x``."""
    return re.sub(r"^(?:[a-z_$][\w$]*\.)+(?=[A-Z])", "", text)


def _root_cause(err: BaseException) -> str:
    """First line of the innermost Java cause of a py4j error ('' for Python errors)."""
    java = getattr(err, "java_exception", None)
    if java is None:
        return ""
    while java.getCause() is not None and java.getCause() != java:
        java = java.getCause()
    text = str(java.toString()).strip()
    return _without_packages(text.splitlines()[0])[:300] if text else ""


#: Iceberg's and Spark's exceptions for a commit another writer got in first (the last two:
#: another writer created the table a bootstrap was creating)
CONFLICTS = (
    "org.apache.iceberg.exceptions.CommitFailedException",
    "org.apache.iceberg.exceptions.ValidationException",
    "org.apache.iceberg.exceptions.AlreadyExistsException",
    "org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException",
)


#: Iceberg's exception for a commit the catalog neither confirmed nor refused
STATE_UNKNOWN = "org.apache.iceberg.exceptions.CommitStateUnknownException"

#: Iceberg's REST client exceptions: what the catalog did, what to check
_REST_FAILURES = {
    "org.apache.iceberg.exceptions.NotAuthorizedException": (
        "refused the credentials (HTTP 401)",
        "the profile's credential or token (expired or revoked?)",
    ),
    "org.apache.iceberg.exceptions.ForbiddenException": (
        "refused access (HTTP 403)",
        "the principal's grants on the catalog and namespace",
    ),
    STATE_UNKNOWN: (
        "did not confirm a commit",
        "the catalog server's health and log; the next run finds out whether it landed",
    ),
    "org.apache.iceberg.exceptions.ServiceFailureException": (
        "failed (HTTP 5xx)",
        "the catalog server's health and log",
    ),
    "org.apache.iceberg.exceptions.ServiceUnavailableException": (
        "is unavailable (HTTP 503)",
        "the catalog server's health",
    ),
    "org.apache.iceberg.exceptions.RESTException": (
        "did not answer",
        "the profile's uri and that the catalog server is up",
    ),
}


def _chain(java: Any) -> list[Any]:
    """A Java exception and its causes, outermost first (at most 20)."""
    found: list[Any] = []
    while java is not None and len(found) < 20:
        found.append(java)
        cause = java.getCause()
        java = None if cause is None or cause == java else cause
    return found


def _java_classes(err: BaseException | None) -> list[str]:
    """Class names of a py4j error's Java exception and its causes, outermost first."""
    java = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    return [str(e.getClass().getName()) for e in _chain(java)]


def is_conflict(err: BaseException | None) -> bool:
    """Whether a failed statement's Java exception (or one of its causes) is a commit
    conflict, told by exception class."""
    return any(name in CONFLICTS for name in _java_classes(err))


def is_state_unknown(err: BaseException | None) -> bool:
    """Whether a failed statement's commit may or may not have been applied."""
    return STATE_UNKNOWN in _java_classes(err)


def describe(output: Output, err: BaseException) -> str:
    """One line saying what failed (``short``); on a REST catalog, a failure of the catalog
    service also names the catalog and what to check (the profile's secrets masked)."""
    text = short(err)
    if output.catalog_type != "rest":
        return text
    for name in _java_classes(err):
        if name in _REST_FAILURES:
            what, check = _REST_FAILURES[name]
            text = (
                f"catalog {output.catalog} (rest at {output.uri}) {what}: "
                f"{_without_packages(text)}; check {check}"
            )
            break
    return output.masked(text)


#: packages of the object-storage clients whose exception is the cause worth saying first (a
#: missing bucket or a refused key surfaces as Spark's "Job aborted ... Failed to close writer")
_STORAGE_CLIENTS = ("software.amazon.awssdk.",)


def _storage_cause(java: Any) -> str:
    """First line of the first cause of ``java`` thrown by an object-storage client, or ''."""
    for cause in _chain(java):
        if str(cause.getClass().getName()).startswith(_STORAGE_CLIENTS):
            text = str(cause.toString()).strip()
            return _without_packages(text.splitlines()[0])[:500] if text else ""
    return ""


def short(err: BaseException) -> str:
    """One line saying what failed: the Java exception for py4j errors (an object store's
    error among its causes first: ``NoSuchBucketException: ...; <Spark's error>``), else the
    message."""
    from lakewide.spark.connect import unavailable

    java = getattr(err, "java_exception", None)
    text = str(java.toString()) if java is not None else str(err).strip()
    gone = None if java is not None else unavailable(err)
    if gone is not None:
        text = f"the Spark Connect server did not answer ({gone})"
    first = text.splitlines()[0] if text else type(err).__name__
    storage = _storage_cause(java) if java is not None else ""
    if storage and storage not in first:
        first = f"{storage}; {first}"
    return first[:2000]

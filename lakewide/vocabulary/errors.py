"""One error root for lakewide; the CLI maps these to exit codes."""

from __future__ import annotations

from pathlib import Path


class LakewideError(Exception):
    """Base of every error lakewide raises on purpose.

    ``exit_code`` is what the CLI returns: 2 for usage/config problems, 1 for a failed model.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        model: str | None = None,
        key: str | None = None,
        sql: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.model = model
        self.key = key
        self.sql = sql

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
        prefix = f"{where}: " if where else ""
        if self.model and not where:
            prefix = f"model {self.model}: "
        if self.key:
            prefix += f"[{self.key}] "
        return f"{prefix}{self.message}"


class ConfigError(LakewideError):
    """Invalid project, profile or model configuration (exit code 2)."""


class CompileError(LakewideError):
    """A model cannot be compiled (exit code 2: the input is wrong, nothing ran)."""


class RuntimeSetupError(LakewideError):
    """Java, jars or the Spark session cannot be set up (exit code 2)."""


class UsageError(LakewideError):
    """A command cannot do what was asked in the project's current state, e.g. ``show`` on a
    model that was never built (exit code 2)."""


class ModelRunError(LakewideError):
    """A model failed while running (exit code 1)."""

    exit_code = 1


class RunInterrupted(LakewideError):
    """Ctrl-C (SIGINT) stopped the command; Spark's jobs were cancelled (exit code 130)."""

    exit_code = 130


class SparkExitedError(ModelRunError):
    """The Spark JVM died under lakewide, e.g. killed or out of memory (exit code 1)."""


class CommitConflict(ModelRunError):
    """Iceberg refused a commit because another writer committed first (the run retries on a
    fresh table state before reporting it)."""


class CommitUnknown(CommitConflict):
    """The catalog did not say whether a commit was applied (Iceberg's
    CommitStateUnknownException, e.g. an HTTP 5xx answer to a REST commit): planned again from
    the catalog's state like a conflict, where the commit's offsets show whether it landed."""


class BranchError(ModelRunError):
    """Iceberg refused a read or write of a table's branch (an environment, ``--branch``): the
    message says what happened and what to do (exit code 1)."""

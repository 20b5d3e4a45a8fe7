"""The ``maintenance``, ``retention`` and ``ttl`` keys of a model's ``config()``.

They say how ``lakewide maintain`` looks after the model's Iceberg table; they change neither
the table's layout nor any statement ``run`` executes, so they are not part of the model's
definition digest (``lakewide.definition``).

Durations are written in lakewide's one duration grammar (lakewide.project.durations):
``'7 days'``, ``'12 hours'``, ``'2 weeks'``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from lakewide.project import durations
from lakewide.project.config.partition_fields import split_field
from lakewide.project.config.specs import RuleError, unknown_key

#: the partition transforms a retention can drop whole partitions of, by name
RETENTION_TRANSFORMS = {
    "hours": "hour",
    "hour": "hour",
    "days": "day",
    "day": "day",
    "months": "month",
    "month": "month",
}
MIN_ORPHAN_AGE = timedelta(days=1)


Duration = Annotated[str, AfterValidator(durations.checked_age)]


class _Section(BaseModel):
    """One mapping of the config: unknown keys name the nearest accepted one."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    section: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise RuleError(
                cls.section, f"{cls.section} expects a mapping, e.g. {cls.example()}", **_PLAIN
            )
        for key in data:
            if key not in cls.model_fields:
                raise RuleError(
                    f"{cls.section}.{key}", unknown_key(str(key), cls.model_fields), **_PLAIN
                )
        return data

    @classmethod
    def example(cls) -> str:
        return "{}"


_PLAIN: dict[str, Any] = {"compile_error": False}


class MaintenanceSpec(_Section):
    """``maintenance={'expire_after': '7 days', 'retain_last': 5, ...}``; every key optional."""

    section: ClassVar[str] = "maintenance"

    enabled: bool = True  # false: ``maintain`` leaves the table alone
    rewrite: bool = True  # rewrite_data_files, rewrite_position_delete_files, rewrite_manifests
    rewrite_options: dict[str, str] = {}  # options of rewrite_data_files, e.g. min-input-files
    expire_after: Duration | None = "5 days"  # None: no expire_snapshots
    retain_last: int = Field(default=1, ge=1)
    orphan_after: Duration | None = "3 days"  # None: no remove_orphan_files

    @classmethod
    def example(cls) -> str:
        return "{'expire_after': '7 days', 'retain_last': 5, 'orphan_after': '3 days'}"

    @model_validator(mode="after")
    def _orphans_settled(self) -> MaintenanceSpec:
        if (
            self.orphan_after is not None
            and durations.parse_age(self.orphan_after) < MIN_ORPHAN_AGE
        ):
            raise RuleError(
                "maintenance.orphan_after",
                f"orphan_after {self.orphan_after!r} is shorter than 1 day: files a write is "
                "still committing could be removed; use at least '1 day' (or none to skip "
                "remove_orphan_files)",
                **_PLAIN,
            )
        return self

    @property
    def expire_age(self) -> timedelta | None:
        return None if self.expire_after is None else durations.parse_age(self.expire_after)

    @property
    def orphan_age(self) -> timedelta | None:
        return None if self.orphan_after is None else durations.parse_age(self.orphan_after)


class RetentionSpec(_Section):
    """``retention={'column': 'ts', 'keep': '30 days'}``: whole partitions of ``days(ts)``,
    ``hours(ts)`` or ``months(ts)`` older than ``keep`` are dropped (metadata only)."""

    section: ClassVar[str] = "retention"

    column: str
    keep: Duration

    @classmethod
    def example(cls) -> str:
        return "{'column': 'ts', 'keep': '30 days'}"

    @property
    def age(self) -> timedelta:
        return durations.parse_age(self.keep)


class TtlSpec(_Section):
    """``ttl={'column': 'updated_at', 'keep': '90 days'}``: rows whose column is older than
    ``keep`` are deleted (a row-level DELETE)."""

    section: ClassVar[str] = "ttl"

    column: str
    keep: Duration

    @classmethod
    def example(cls) -> str:
        return "{'column': 'updated_at', 'keep': '90 days'}"

    @property
    def age(self) -> timedelta:
        return durations.parse_age(self.keep)


def retention_granularity(retention: RetentionSpec, partition_by: list[str]) -> str:
    """``hour``, ``day`` or ``month``: the partition transform of the retention's column.

    RuleError when the column is not partitioned by one of those transforms (a retention
    could then not drop whole partitions: it would rewrite data files)."""
    for text in partition_by:
        field = split_field(text)
        if field is not None and field.column_name.lower() == retention.column.lower():
            if field.width is None and field.transform in RETENTION_TRANSFORMS:
                return RETENTION_TRANSFORMS[field.transform]
    given = ", ".join(repr(f) for f in partition_by) or "none"
    raise RuleError(
        "retention.column",
        f"retention drops whole partitions, so its column '{retention.column}' must be "
        f"partitioned by hours({retention.column}), days({retention.column}) or "
        f"months({retention.column}) in partition_by (partition_by: {given}); for a row "
        "age limit on any column use ttl={'column': ..., 'keep': ...}",
        **_PLAIN,
    )

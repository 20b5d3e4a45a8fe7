"""Durations, one grammar for every option that takes one: a model's ``freshness`` (Snowflake's
``TARGET_LAG``, Flink's ``FRESHNESS = INTERVAL '5' MINUTE``, dbt's ``{count: 5, period: minute}``),
its ``maintenance`` ages (``expire_after``, ``orphan_after``, ``retention.keep``, ``ttl.keep``)
and a profile's ``tag_retention`` (docs/reference/durations.md).

Accepted: a number and a unit, ``'30 seconds'``, ``'5 minutes'``, ``'1 hour'``, ``'1.5 hours'``,
``'2 days'``, ``'1 week'``; the short units ``s``, ``sec``, ``m``, ``min``, ``h``, ``hr``, ``d``,
``w``, with or without a space (``'90s'``, ``'5min'``); Flink's ``INTERVAL '5' MINUTE``; dbt's
mapping ``{'count': 5, 'period': 'minute'}``. Case does not matter. Zero, negative numbers, a
bare number and other units are refused. A tag retention is also ``'forever'``, and whole
minutes (Iceberg keeps a tag for whole minutes, hours or days).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

UNITS: dict[str, float] = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600.0),
    **dict.fromkeys(("d", "day", "days"), 86400.0),
    **dict.fromkeys(("w", "wk", "week", "weeks"), 604800.0),
}
ACCEPTED = "a number and a unit, e.g. '30 seconds', '5 minutes', '1 hour', '7 days', '2 weeks'"
_DURATION = re.compile(
    r"^\s*(?:interval\s+)?(?P<quote>'?)(?P<number>\d+(?:\.\d+)?)(?P=quote)\s*(?P<unit>[a-z]+)\s*$",
    re.IGNORECASE,
)


def parse_duration(value: Any, *, zero: bool = False) -> float:
    """Seconds of a duration (see the module doc); ValueError saying what is accepted.

    ``zero``: ``'0 seconds'`` is accepted (an age: maintenance may expire everything older
    than now); a lag or a retention is more than zero.
    """
    if isinstance(value, dict):
        return _parse_period(value, zero)
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError(f"expected {ACCEPTED} (a string, not {type(value).__name__})")
    match = _DURATION.match(value)
    if match is None:
        raise ValueError(f"expected {ACCEPTED}")
    unit = match.group("unit").lower()
    if unit not in UNITS:
        units = "seconds, minutes, hours, days, weeks (or s, min, h, d, w)"
        raise ValueError(f"unknown unit {match.group('unit')!r}: use {units}")
    seconds = float(match.group("number")) * UNITS[unit]
    if seconds < 0 or (seconds == 0 and not zero):
        raise ValueError(f"a duration must be more than zero; expected {ACCEPTED}")
    return seconds


def parse_age(value: Any) -> timedelta:
    """An age (a duration that may be zero) as a timedelta; ValueError saying what is accepted."""
    return timedelta(seconds=parse_duration(value, zero=True))


def checked_age(value: Any) -> Any:
    """``value`` when it is an age (a validator for config fields kept as written)."""
    parse_age(value)
    return value


def _parse_period(value: dict[Any, Any], zero: bool = False) -> float:
    """dbt's ``{count: 12, period: hour}``."""
    count, period = value.get("count"), value.get("period")
    if set(value) != {"count", "period"} or isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(
            f"expected {ACCEPTED}, or dbt's mapping {{'count': 5, 'period': 'minute'}}"
        )
    return parse_duration(f"{count} {period}", zero=zero)


def normalized(value: Any) -> str:
    """The duration as stored in the config: as written, dbt's mapping as ``'<count> <period>'``
    (ValueError when it is not a duration)."""
    parse_duration(value)
    if isinstance(value, dict):
        return f"{value['count']} {value['period']}"
    return str(value).strip()


def describe(seconds: float) -> str:
    """A duration for people: ``45s``, ``5m``, ``1h 30m``, ``2d 3h``."""
    total = round(seconds)
    if total < 60:
        return f"{seconds:.1f}s" if seconds < 10 and seconds != total else f"{total}s"
    parts = []
    for size, label in ((86400, "d"), (3600, "h"), (60, "m"), (1, "s")):
        amount, total = divmod(total, size)
        if amount:
            parts.append(f"{amount}{label}")
    return " ".join(parts[:2])


_MINUTES = {"DAYS": 24 * 60, "HOURS": 60, "MINUTES": 1}
FOREVER = "forever"


@dataclass(frozen=True)
class Retention:
    """How long Iceberg keeps a tag (its ``max-ref-age``); None amount: forever."""

    amount: int | None = 7
    unit: str = "DAYS"  # DAYS | HOURS | MINUTES

    def __str__(self) -> str:
        return FOREVER if self.amount is None else f"{self.amount} {self.unit.lower()}"

    def after(self, age_ms: int) -> Retention:
        """This retention counted from now for a snapshot ``age_ms`` old: Iceberg counts a
        tag's age from its snapshot's commit time, so a run's tags (on snapshots of several
        ages) would otherwise not expire together. In whole minutes, rounded up."""
        if self.amount is None:
            return self
        minutes = self.amount * _MINUTES[self.unit] + max(0, -(-age_ms // 60_000))
        return Retention(minutes, "MINUTES")


def parse_retention(value: Any) -> Retention:
    """A tag retention: ``'forever'`` or a duration of whole minutes, in the largest of days,
    hours and minutes that holds it exactly; ValueError saying what is accepted otherwise."""
    if isinstance(value, str) and value.strip().lower() == FOREVER:
        return Retention(None)
    seconds = parse_duration(value)
    if seconds % 60:
        raise ValueError(f"a tag retention is whole minutes or '{FOREVER}'; expected {ACCEPTED}")
    minutes = int(seconds // 60)
    for unit, size in _MINUTES.items():
        if minutes % size == 0:
            return Retention(minutes // size, unit)
    raise AssertionError("unreachable: every whole number of minutes is MINUTES")

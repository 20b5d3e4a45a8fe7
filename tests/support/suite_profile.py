"""How long the suite's property tests and soaks run: a default a contributor waits minutes for,
and a long profile for soaks.

* default (``python -m pytest``): every property runs ``FAST_SCALE`` of its example count (at
  least one, besides its explicit ``@example`` cases, which always run), the writers' race the
  rounds that meet each way a round ends once;
* ``LW_SOAK=long python -m pytest``: every property at its full count and the race 12 rounds;
* ``LW_PROPERTY_SCALE=<x>`` sets the properties' scale directly (1 = the full count, ``5`` a
  deeper run), in either profile.

Property examples are derandomized: a shorter run tries a prefix of the long run's examples.
"""

from __future__ import annotations

import os

#: the default share of each property's example count
FAST_SCALE = 0.4


def long_profile() -> bool:
    """True when ``LW_SOAK=long`` asks for the long soaks and full property counts."""
    return os.environ.get("LW_SOAK", "").strip().lower() == "long"


def examples(n: int) -> int:
    """A property's example count for this run: ``n`` scaled by ``LW_PROPERTY_SCALE`` (default
    1 in the long profile, ``FAST_SCALE`` otherwise), at least one."""
    default = "1" if long_profile() else str(FAST_SCALE)
    return max(1, round(n * float(os.environ.get("LW_PROPERTY_SCALE", default))))


def soak(fast: int, long: int) -> int:
    """A soak's repetitions: ``fast`` by default, ``long`` in the long profile."""
    return long if long_profile() else fast

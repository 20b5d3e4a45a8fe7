"""How long the suite's property tests and soaks run: a default a contributor waits minutes for,
and a long profile for soaks.

* default (``python -m pytest``): every property runs ``FAST_SCALE`` of its example count (at
  least one, besides its explicit ``@example`` cases, which always run); the soaks (tests marked
  ``soak``: the REST catalog's faults and kills, the writers' races, the standalone cluster) are
  left out by ``-m "not soak"`` in pyproject.toml's addopts;
* ``python -m pytest -m soak``: the soaks alone (CI's soak leg), the writers' race the rounds that
  meet each way a round ends once; a soak file or folder named on the command line runs too
  (``python -m pytest tests/integration/test_rest_faults.py``: ``select_soaks``);
* ``LW_SOAK=long python -m pytest``: everything, soaks included, every property at its full count
  and the race 12 rounds;
* ``LW_PROPERTY_SCALE=<x>`` sets the properties' scale directly (1 = the full count, ``5`` a
  deeper run), in either profile.

The suite runs on pytest-xdist's workers (pyproject.toml's addopts: ``-n auto``, whole files per
worker, each worker with a SparkSession of its own); ``jvm_files_first`` hands them the files that
use Spark first, the most Spark tests first, so that the many short files fill the end.

Property examples are derandomized: a shorter run tries a prefix of the long run's examples.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

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


#: the default mark expression (pyproject.toml's addopts): the soaks are left out
WITHOUT_SOAKS = "not soak"


def select_soaks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Let the soaks run where the default ``-m "not soak"`` would leave out what was asked for.

    A run whose command line gives its own ``-m`` is left to it. Otherwise ``LW_SOAK=long`` runs
    every test, and a path on the command line under which every collected test is a soak (a
    soak file, one of its tests, ``tests/cluster``) runs its soaks; soaks under any other path
    (``tests/integration``, the whole suite) stay out. Called before pytest's own ``-m``.
    """
    if config.option.markexpr != WITHOUT_SOAKS or _gives_marks(config.invocation_params.args):
        return
    if long_profile():
        config.option.markexpr = ""
        return
    here = config.invocation_params.dir
    named = [(here / arg.split("::")[0]).resolve() for arg in config.args]
    asked = [path for path in named if _only_soaks(path, items)]
    if not asked:
        return
    config.option.markexpr = ""
    kept = [i for i in items if not _is_soak(i) or any(_under(i, path) for path in asked)]
    left_out = [i for i in items if i not in kept]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def _gives_marks(args: tuple[str, ...]) -> bool:
    return any(arg == "-m" or (arg.startswith("-m") and not arg.startswith("--")) for arg in args)


def _is_soak(item: pytest.Item) -> bool:
    return item.get_closest_marker("soak") is not None


def _under(item: pytest.Item, path: Path) -> bool:
    return item.path == path or path in item.path.parents


def _only_soaks(path: Path, items: list[pytest.Item]) -> bool:
    under = [item for item in items if _under(item, path)]
    return bool(under) and all(_is_soak(item) for item in under)


def jvm_files_first(items: list[pytest.Item]) -> None:
    """Order the files so that the ones with the most tests on a JVM (the session's ``spark``
    fixture, or marked ``spark`` or ``slow``) come first; each file's tests keep their order.

    pytest-xdist's ``--dist loadfile`` hands whole files to the workers in this order (with
    ``--no-loadscope-reorder``, which pyproject.toml's addopts give), so the long files start
    first and the short ones even out the workers' ends.

    A file's tests come out together even when pytest's parametrization had spread them (it
    groups a module-scoped fixture's parameters, as in ``test_s3_warehouse``): the sort key is
    the file's.
    """
    weight = Counter(item.path for item in items if _on_a_jvm(item))
    first_seen = {path: n for n, path in enumerate(dict.fromkeys(item.path for item in items))}
    items.sort(key=lambda item: (-weight[item.path], first_seen[item.path]))


def _on_a_jvm(item: pytest.Item) -> bool:
    uses_spark = "spark" in getattr(item, "fixturenames", ())
    return uses_spark or any(item.get_closest_marker(m) for m in ("spark", "slow"))

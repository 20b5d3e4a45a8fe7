"""Which unit tests ``--select``/``--exclude`` name: a test by its name, or the tests of the
models a model selector (``name``, ``+name``, ``tag:x``, ``path:...``) selects."""

from __future__ import annotations

from lakewide.project.graph import select
from lakewide.project.manifest import Manifest
from lakewide.run.testing.unit_tests.spec import UnitTest
from lakewide.vocabulary.errors import ConfigError


def select_unit_tests(
    manifest: Manifest,
    tests: list[UnitTest],
    selectors: list[str],
    exclude: list[str],
    *,
    require_match: bool = True,
) -> list[UnitTest]:
    """The tests selected (all without selectors), minus those excluded, in file order;
    ``require_match``: selectors that select no test are a ConfigError (as ``run``'s are)."""
    names = {t.name for t in tests}

    def chosen(tokens: list[str]) -> set[str]:
        by_name = {t for t in tokens if t in names}
        models = [t for t in tokens if t not in names]
        picked = set(by_name)
        if models:
            root = manifest.project.root
            found = set(select(manifest.models, models, None, root, manifest.state))
            picked |= {t.name for t in tests if t.model in found}
        return picked

    wanted = chosen(selectors) if selectors else names
    dropped = chosen(exclude) if exclude else set()
    found = [t for t in tests if t.name in wanted and t.name not in dropped]
    stated = any("state:" in s for s in selectors)  # a change may touch no tested model
    if require_match and selectors and not found and not stated:
        raise ConfigError(
            f"--select {' '.join(selectors)} matches no unit test; unit tests: "
            f"{', '.join(sorted(names)) or 'none'}"
        )
    return found

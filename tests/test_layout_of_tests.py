"""The tests' own layout (no JVM): unit tests mirror the package, feature tests have folders.

A unit-test file sits in the folder that mirrors its module (``tests/state/`` for
``lakewide/state/``, ``tests/project/config/`` for ``lakewide/project/config/``); the feature
tree (integration, oracle, cluster, connect, ...) and the helpers (``tests/support/``) are the
only other folders. No two test files share a name, and only tests of the top-level modules lie
loose at ``tests/``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "lakewide"

#: test files of the package's top-level modules and of the whole package (its import layers)
TOP_LEVEL = {"test_cli.py", "test_layers.py", "test_layout_of_tests.py"}

#: folders of tests that are not unit tests of one module, and of the tests' helpers
FEATURE_FOLDERS = {
    "benchmarks",
    "cluster",
    "connect",
    "docs_site",
    "features",
    "integration",
    "oracle",
    "support",
}


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def test_no_two_test_files_share_a_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in _test_files():
        by_name[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"test files sharing a name (rename one to say what it tests): {shared}"


def test_only_top_level_modules_have_loose_test_files() -> None:
    loose = sorted(p.name for p in TESTS.glob("test_*.py") if p.name not in TOP_LEVEL)
    assert not loose, (
        f"test files loose at tests/: {loose}; move each to the folder that mirrors its module "
        f"(tests/state/ for lakewide/state/, ...) or to a feature folder {sorted(FEATURE_FOLDERS)}"
    )


def test_every_test_folder_mirrors_a_package_folder_or_is_a_feature_folder() -> None:
    strays = []
    for path in _test_files():
        folder = path.parent.relative_to(TESTS)
        if folder == Path(".") or folder.parts[0] in FEATURE_FOLDERS:
            continue
        if not (PACKAGE / folder).is_dir():
            strays.append(str(path.relative_to(TESTS)))
    assert not strays, f"test files in folders that mirror no folder of lakewide/: {strays}"


def test_every_test_folder_is_a_package() -> None:
    # the tests import one another as tests.<folder>.<module>; without __init__.py pytest would
    # import two files of one name in different folders as the same module
    missing = sorted(
        str(folder.relative_to(TESTS))
        for folder in {p.parent for p in _test_files()}
        if not (folder / "__init__.py").is_file()
    )
    assert not missing, f"test folders without __init__.py: {missing}"

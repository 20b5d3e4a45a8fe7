"""``lakewide compile``: each model's statements and run plans as files (no JVM)."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from lakewide.artifacts.compile_stamp import forget, nothing_changed, remember
from lakewide.artifacts.compiled_files import SERIAL_BELOW, compile_all, default_processes
from lakewide.artifacts.manifest_json import (
    compiled_checksum,
    remember_compiled,
    tests_fingerprint,
    unchanged,
)
from lakewide.commands.output.console import console
from lakewide.commands.services.context import (
    Options,
    pass_options,
    profile_options,
    selected,
    selection,
    state_options,
)
from lakewide.commands.services.tests import chosen_tests, chosen_unit_tests
from lakewide.compiler.queries.data_test_queries import failing_rows
from lakewide.project.manifest import Manifest
from lakewide.project.profiles_file import find_profiles_file
from lakewide.project.settings import load_project
from lakewide.vocabulary.dialect import to_sql


def _replace_folder(folder: Path, files: dict[str, str]) -> None:
    """Make ``folder`` hold exactly ``files`` (overwriting in place is cheaper than rmtree)."""
    if folder.is_dir():
        keep = {name.split("/", 1)[0] for name in files}
        for stale in folder.iterdir():
            if stale.name in keep:
                continue
            if stale.is_dir():
                shutil.rmtree(stale)
            else:
                stale.unlink()
    else:
        folder.mkdir(parents=True)
    for file_name, text in files.items():
        path = folder / file_name
        if "/" in file_name:
            path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")


@click.command(name="compile")
@selection
@profile_options
@click.option(
    "--threads",
    metavar="N",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that compile models at once (default: the CPUs this process may use; "
    f"one below {SERIAL_BELOW} selected models).",
)
@click.option(
    "--all-plans",
    is_flag=True,
    help="Also write every statement and every run plan of each model, step by step, as a run "
    "executes them (target/compiled/<model>/plans/); default: a key table's summary.md.",
)
@state_options
@pass_options
def compile_(
    options: Options,
    select: tuple[str, ...],
    exclude: tuple[str, ...],
    threads: int | None,
    all_plans: bool,
) -> None:
    """Write what each model's run does to target/compiled/<model>/ (no JVM needed): a key
    table's summary.md, another model's statements; every plan with --all-plans. A model whose
    inputs did not change since the last compile keeps its files."""
    project = load_project(options.project_dir)
    profiles = find_profiles_file(project.root, options.profiles_dir)
    given = {"target": options.target, "vars": options.variables, "profiles": str(profiles)}
    everything = not (select or exclude or all_plans)
    if everything:
        count = nothing_changed(project, profiles, given)
        if count is not None:
            console.print(f"nothing changed since the last compile: {count} model(s) kept")
            return
    forget(project)
    manifest = options.manifest()
    out_root = manifest.project.target_path / "compiled"
    names = selected(manifest, select, exclude)
    chosen_unit_tests(manifest, select, exclude)  # their files checked as `test` does
    processes = threads or default_processes()
    kept = {} if all_plans else unchanged(manifest, names, out_root)
    for name, checksum in kept.items():
        remember_compiled(manifest, manifest.models[name], checksum)
    if kept:
        console.print(f"{len(kept)} model(s) unchanged since the last compile: kept")
    to_compile = [n for n in names if n not in kept]
    for written in compile_all(
        manifest, to_compile, out_root, _replace_folder, processes, all_plans
    ):
        assert written.checksum is not None
        # manifest.json reuses the checksum instead of compiling the model again
        remember_compiled(manifest, manifest.models[written.name], written.checksum)
        console.print(
            f"compiled {written.name} ({written.kind}) -> "
            f"{manifest.project.relative(out_root / written.name)} [{written.files} file(s)]"
        )
    write_compiled_tests(manifest, out_root / "tests", select, exclude)
    if everything:
        remember(project, profiles, given, len(names))


#: what ``target/compiled/tests/`` was compiled from (next to the folder, not in it)
TESTS_STAMP = ".compiled_tests"


def write_compiled_tests(
    manifest: Manifest, folder: Path, select: tuple[str, ...], exclude: tuple[str, ...]
) -> None:
    """Each selected data test's failing-rows query as ``<folder>/<test>.sql``."""
    tests = chosen_tests(manifest, select, exclude)
    if not tests:
        return
    shown = manifest.project.relative(folder)
    if select or exclude:
        folder.mkdir(parents=True, exist_ok=True)
        for t in tests:
            (folder / f"{t.name}.sql").write_text(to_sql(failing_rows(t.spec)), encoding="utf-8")
    else:  # all of them: kept when their fingerprint and files are the last compile's
        digest = tests_fingerprint(tests)
        stamp = folder.parent.parent / TESTS_STAMP
        if _kept_tests(folder, stamp, digest, len(tests)):
            console.print(f"{len(tests)} data test(s) unchanged since the last compile: kept")
            return
        files = {f"{t.name}.sql": to_sql(failing_rows(t.spec)) for t in tests}
        _replace_folder(folder, files)
        stamp.write_text(f"{digest} {_checksum(files)}\n", encoding="utf-8")
    console.print(f"compiled {len(tests)} data test(s) -> {shown}")


def _checksum(files: dict[str, str]) -> str:
    return compiled_checksum(files)["checksum"]


def _kept_tests(folder: Path, stamp: Path, digest: str, count: int) -> bool:
    """Whether ``folder`` holds the ``count`` queries compiled from ``digest``, unedited."""
    try:
        kept = stamp.read_text(encoding="utf-8").split()
        files = {f.name: f.read_text(encoding="utf-8") for f in folder.iterdir()}
    except OSError:
        return False
    return len(files) == count and kept == [digest, _checksum(files)]

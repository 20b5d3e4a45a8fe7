"""A lakewide project on disk: ``[tool.lakewide]`` settings and where models, macros, seeds live."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from lakewide.project.config.specs import Strict, checked
from lakewide.project.text_files import read_utf8
from lakewide.vocabulary.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SETTINGS = {
    "profile": "name of the profile in profiles.yml (default: the project name)",
    "model-paths": "folders holding models (default ['models'])",
    "macro-paths": "folders holding macros (default ['macros'])",
    "seed-paths": "folders holding CSV seeds (default ['seeds'])",
    "test-paths": "folders holding singular data tests, *.sql (default ['data-tests'])",
    "target-path": "where compiled SQL and run results go (default 'target')",
    "seed-schema": "namespace seeds are loaded into (default: the profile's namespace)",
    "vars": "values for var() in models",
    "clean-targets": "folders `lakewide clean` removes (default: [target-path])",
}


@dataclass(frozen=True)
class Project:
    """Paths and settings of one project directory."""

    root: Path
    name: str
    profile: str
    model_paths: list[Path]
    macro_paths: list[Path]
    seed_paths: list[Path]
    target_path: Path
    seed_schema: str | None = None
    vars: dict[str, Any] = field(default_factory=dict)
    test_paths: list[Path] = field(default_factory=list)
    clean_targets: list[Path] = field(default_factory=list)

    def relative(self, path: Path) -> str:
        """A path as shown to users: relative to the project root when inside it."""
        if path.is_absolute() and ".." not in path.parts:
            inside = _inside(self.root, path)  # no file system call
            if inside is not None:
                return inside
        try:
            return str(path.resolve().relative_to(self.root))
        except ValueError:
            return str(path)


@functools.lru_cache(maxsize=4096)
def _inside(root: Path, path: Path) -> str | None:
    """``path`` relative to ``root`` when under it, once per pair (a properties file names
    thousands of nodes)."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else None


def _folders(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class Settings(Strict):
    """``[tool.lakewide]``: every key optional, each with its type (``SETTINGS`` says what)."""

    profile: str | None = None
    model_paths: Annotated[list[str], BeforeValidator(_folders)] = Field(
        ["models"], alias="model-paths"
    )
    macro_paths: Annotated[list[str], BeforeValidator(_folders)] = Field(
        ["macros"], alias="macro-paths"
    )
    seed_paths: Annotated[list[str], BeforeValidator(_folders)] = Field(
        ["seeds"], alias="seed-paths"
    )
    test_paths: Annotated[list[str], BeforeValidator(_folders)] = Field(
        ["data-tests"], alias="test-paths"
    )
    target_path: str = Field("target", alias="target-path")
    seed_schema: str | None = Field(None, alias="seed-schema")
    vars: dict[str, Any] = {}
    clean_targets: Annotated[list[str] | None, BeforeValidator(_folders)] = Field(
        None, alias="clean-targets"
    )


def load_project(root: Path | str = ".") -> Project:
    """Read ``pyproject.toml``'s ``[tool.lakewide]`` table (all keys optional)."""
    root = Path(root).resolve()
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        raise ConfigError(
            f"no pyproject.toml in {root}; run `lakewide init DIR` to start a "
            "project or pass --project-dir",
            path=pyproject,
        )
    try:
        data = tomllib.loads(read_utf8(pyproject))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"pyproject.toml is not valid TOML: {err}", path=pyproject) from None
    settings = data.get("tool", {}).get("lakewide", {})
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        accepted = "; ".join(f"{k}: {v}" for k, v in SETTINGS.items())
        raise ConfigError(
            f"unknown setting '{unknown[0]}'. Accepted: {accepted}",
            path=pyproject,
            key=f"tool.lakewide.{unknown[0]}",
        )
    name = str(data.get("project", {}).get("name", root.name))
    checked_settings = checked(Settings, settings, key="tool.lakewide", path=pyproject)
    return Project(
        root=root,
        name=name,
        profile=checked_settings.profile or name,
        model_paths=[root / p for p in checked_settings.model_paths],
        macro_paths=[root / p for p in checked_settings.macro_paths],
        seed_paths=[root / p for p in checked_settings.seed_paths],
        target_path=root / checked_settings.target_path,
        seed_schema=checked_settings.seed_schema,
        vars=dict(checked_settings.vars),
        test_paths=[root / p for p in checked_settings.test_paths],
        clean_targets=[
            root / p for p in (checked_settings.clean_targets or [checked_settings.target_path])
        ],
    )

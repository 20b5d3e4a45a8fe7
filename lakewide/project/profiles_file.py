"""Reading a ``profiles.yml``: the file found, rendered (``env_var()``, never printed), and one
output's settings checked (lakewide.project.profiles holds what an output is)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined, TemplateError, TemplateSyntaxError
from pydantic import (
    ValidationError,
)

from lakewide.project.connect_profile import check_connect
from lakewide.project.jdbc import check_jdbc
from lakewide.project.profiles import Output, check_master, check_rest
from lakewide.project.text_files import load_yaml, read_utf8
from lakewide.vocabulary.errors import ConfigError

#: the environment variables ``env_var()`` read in this process (what a compile depended on)
ENV_READ: set[str] = set()


def env_var(name: str, default: str | None = None) -> str:
    """``{{ env_var('NAME', 'default') }}``: an environment variable, or fail clearly."""
    ENV_READ.add(name)
    value = os.environ.get(name, default)
    if value is None:
        raise _unset_error(name)
    return value


def _unset_error(name: str, **where: Any) -> ConfigError:
    return ConfigError(
        f"environment variable {name} is not set and has no default; "
        f"set it or write env_var('{name}', '<default>')",
        **where,
    )


class _Unset:
    """A profiles.yml value from an unset ``env_var()`` without default: an error only where
    it is used (the chosen target), so another target's secrets need not be set."""

    def __init__(self, name: str) -> None:
        self.name = name


_UNSET_MARK = "\x00lakewide-unset:{}\x00"
_UNSET_RE = re.compile("\x00lakewide-unset:([^\x00]*)\x00")


def _profile_env_var(name: str, default: str | None = None) -> str:
    ENV_READ.add(name)
    value = os.environ.get(name, default)
    return _UNSET_MARK.format(name) if value is None else value


def _check_set(node: Any, path: Path, key: str) -> None:
    """ConfigError naming ``key`` (and the variable) when ``node`` holds an unset env_var()."""
    if isinstance(node, _Unset):
        raise _unset_error(node.name, path=path, key=key)
    if isinstance(node, dict):
        for sub, value in node.items():
            _check_set(value, path, f"{key}.{sub}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _check_set(value, path, f"{key}[{index}]")


def find_profiles_file(project_root: Path, profiles_dir: Path | None = None) -> Path:
    """``--profiles-dir``, then ``$LAKEWIDE_PROFILES_DIR``, the project, ``~/.lakewide``."""
    candidates = [profiles_dir] if profiles_dir else []
    if os.environ.get("LAKEWIDE_PROFILES_DIR"):
        candidates.append(Path(os.environ["LAKEWIDE_PROFILES_DIR"]))
    candidates += [project_root, Path.home() / ".lakewide"]
    for folder in candidates:
        if (folder / "profiles.yml").is_file():
            return folder / "profiles.yml"
    raise ConfigError(
        "no profiles.yml found (looked in --profiles-dir, $LAKEWIDE_PROFILES_DIR, "
        f"{project_root} and ~/.lakewide)"
    )


# Every ``{{ ... }}`` of profiles.yml is rendered as a placeholder and put back after YAML
# parsing: a value (a secret from env_var()) can neither break the YAML nor be echoed by an error.
_PLACEHOLDER = "__lakewide_value_{}__"
_PLACEHOLDER_RE = re.compile(r"__lakewide_value_(\d+)__")


def _render_profiles(path: Path) -> tuple[str, list[str | _Unset]]:
    """The file's text with each ``{{ }}`` value replaced by a placeholder, and the values."""
    values: list[str | _Unset] = []

    def finalize(value: Any) -> str:
        text = "" if value is None else str(value)
        unset = _UNSET_RE.search(text)
        values.append(_Unset(unset.group(1)) if unset else text)
        return _PLACEHOLDER.format(len(values) - 1)

    environment = Environment(
        undefined=StrictUndefined, finalize=finalize, keep_trailing_newline=True
    )
    text = environment.from_string(read_utf8(path)).render(env_var=_profile_env_var)
    return text, values


def _restore(node: Any, values: list[str | _Unset]) -> Any:
    """``node`` (parsed YAML) with every placeholder replaced by its value (always a string)."""
    if isinstance(node, str):
        used = [values[int(i)] for i in _PLACEHOLDER_RE.findall(node)]
        unset = [v for v in used if isinstance(v, _Unset)]
        if unset:
            return unset[0]
        whole = _PLACEHOLDER_RE.fullmatch(node)
        if whole:
            return values[int(whole.group(1))]
        return _PLACEHOLDER_RE.sub(lambda m: str(values[int(m.group(1))]), node)
    if isinstance(node, dict):
        return {_restore(k, values): _restore(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_restore(v, values) for v in node]
    return node


def _yaml_error(err: yaml.YAMLError, path: Path) -> ConfigError:
    """Where and what the YAML error is, without the text around it (it may hold secrets)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or type(err).__name__
    if mark is None:
        return ConfigError(f"not valid YAML ({problem})", path=path)
    return ConfigError(
        f"not valid YAML (column {mark.column + 1}): {problem}", path=path, line=mark.line + 1
    )


def read_profiles(path: Path) -> dict[str, Any]:
    """The rendered, parsed ``profiles.yml``: a mapping of profile name -> profile."""
    try:
        text, values = _render_profiles(path)
        data: Any = load_yaml(text)
    except ConfigError as err:
        err.path = path
        raise
    except TemplateSyntaxError as err:
        raise ConfigError(
            f"template does not parse: {err.message}", path=path, line=err.lineno
        ) from None
    except TemplateError as err:
        raise ConfigError(f"template failed to render: {err.message}", path=path) from None
    except yaml.YAMLError as err:
        raise _yaml_error(err, path) from None
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"not UTF-8 text (byte {err.start}); save the file as UTF-8", path=path
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of profile name -> {{target, outputs}}, found "
            f"{_kind(data)}; see `lakewide init` for an example",
            path=path,
        )
    restored: dict[str, Any] = _restore(data, values)  # a mapping restores to a mapping
    return restored


def _kind(value: Any) -> str:
    kinds: dict[type, str] = {list: "a list", str: "a string", dict: "a mapping"}
    return kinds.get(type(value), type(value).__name__)


def _mapping(value: Any, path: Path, key: str, what: str) -> dict[str, Any]:
    _check_set(value if isinstance(value, _Unset) else None, path, key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"expected {what}, found {_kind(value)}", path=path, key=key)
    return value


def _output_settings(
    path: Path, data: dict[str, Any], profile: str, target: str | None
) -> tuple[str, dict[str, Any]]:
    """The chosen target's name and its settings, each level checked for shape."""
    if profile not in data:
        raise ConfigError(
            f"profile '{profile}' not found; profiles here: "
            f"{', '.join(sorted(map(str, data))) or 'none'}; add it or set "
            "[tool.lakewide] profile in pyproject.toml",
            path=path,
            key=profile,
        )
    entry = _mapping(data[profile], path, profile, "a mapping with 'target' and 'outputs'")
    if "outputs" not in entry:
        raise ConfigError(
            f"profile '{profile}' has no 'outputs'; add outputs: {{dev: {{...}}}} "
            "with one mapping of settings per target",
            path=path,
            key=f"{profile}.outputs",
        )
    outputs = _mapping(
        entry["outputs"], path, f"{profile}.outputs", "a mapping of target name -> settings"
    )
    _check_set(entry.get("target"), path, f"{profile}.target")
    chosen = target or entry.get("target") or "dev"
    if not isinstance(chosen, str):
        raise ConfigError(
            f"expected a target name, found {_kind(chosen)}; targets: "
            f"{', '.join(sorted(map(str, outputs))) or 'none'}",
            path=path,
            key=f"{profile}.target",
        )
    if chosen not in outputs:
        how = (
            ""
            if target or entry.get("target")
            else " (the profile has no 'target', so 'dev' was tried; add target: <name>)"
        )
        raise ConfigError(
            f"target '{chosen}' not found in profile '{profile}'{how}; targets: "
            f"{', '.join(sorted(map(str, outputs))) or 'none'}",
            path=path,
            key=f"{profile}.outputs",
        )
    settings = _mapping(
        outputs[chosen],
        path,
        f"{profile}.outputs.{chosen}",
        f"a mapping of settings (accepted keys: {', '.join(Output.model_fields)})",
    )
    _check_set(settings, path, f"{profile}.outputs.{chosen}")
    return chosen, settings


def load_output(
    path: Path, profile: str, target: str | None = None, project_root: Path | None = None
) -> Output:
    """Read one target of one profile; a relative hadoop warehouse resolves against the project."""
    data = read_profiles(path)
    target, settings = _output_settings(path, data, profile, target)
    try:
        output = Output(**settings)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"{first['msg']} (accepted keys: {', '.join(Output.model_fields)})",
            path=path,
            key=f"{profile}.outputs.{target}.{key}",
        ) from None
    output._origin = (str(path), f"{profile}.outputs.{target}")
    check_master(output)
    root = project_root or path.parent
    if output.catalog_type == "hadoop":
        warehouse = output.warehouse or "warehouse"
        if "://" not in warehouse:
            output.warehouse = str((root / warehouse).resolve())
    elif output.catalog_type == "jdbc":
        check_jdbc(output, root)
    elif output.catalog_type == "rest":
        check_rest(output)
    for key in ("user", "password"):
        if output.catalog_type != "jdbc" and getattr(output, key) is not None:
            raise output.config_error(
                f"`{key}` is the database login of a JDBC catalog (catalog_type: jdbc); "
                f"this output's catalog_type is {output.catalog_type}: remove `{key}` or "
                "pass it in catalog_properties",
                key,
            )
    for key in ("credential", "token"):
        if output.catalog_type != "rest" and getattr(output, key) is not None:
            raise output.config_error(
                f"`{key}` authenticates to a REST catalog (catalog_type: rest); this output's "
                f"catalog_type is {output.catalog_type}: remove `{key}`",
                key,
            )
    check_connect(output)
    return output

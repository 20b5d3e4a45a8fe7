"""dbt-style ``profiles.yml``: profile -> target -> output with Spark and Iceberg settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from jinja2 import Environment, StrictUndefined, TemplateError
from pydantic import BaseModel, ConfigDict, ValidationError

from lakewide.errors import ConfigError

CatalogType = Literal["hadoop", "rest", "hive", "jdbc"]


class Output(BaseModel):
    """One target's connection: where Spark runs and which Iceberg catalog it writes."""

    model_config = ConfigDict(extra="forbid")

    master: str = "local[*]"
    catalog: str = "lakewide"
    catalog_type: CatalogType = "hadoop"
    warehouse: str | None = None
    uri: str | None = None
    namespace: str = "default"
    catalog_properties: dict[str, str] = {}
    spark_conf: dict[str, str] = {}

    def iceberg_catalog_properties(self) -> dict[str, str]:
        """Properties of ``spark.sql.catalog.<catalog>.*`` for this output."""
        props: dict[str, str] = {}
        if self.catalog_type == "jdbc":
            props["catalog-impl"] = "org.apache.iceberg.jdbc.JdbcCatalog"
        else:
            props["type"] = self.catalog_type
        if self.warehouse:
            props["warehouse"] = self.warehouse
        if self.uri:
            props["uri"] = self.uri
        props.update(self.catalog_properties)
        return props


def env_var(name: str, default: str | None = None) -> str:
    """``{{ env_var('NAME', 'default') }}``: an environment variable, or fail clearly."""
    value = os.environ.get(name, default)
    if value is None:
        raise ConfigError(f"environment variable {name} is not set and has no default; "
                          f"set it or write env_var('{name}', '<default>')")
    return value


def find_profiles_file(project_root: Path, profiles_dir: Path | None = None) -> Path:
    """``--profiles-dir``, then ``$LAKEWIDE_PROFILES_DIR``, the project, ``~/.lakewide``."""
    candidates = [profiles_dir] if profiles_dir else []
    if os.environ.get("LAKEWIDE_PROFILES_DIR"):
        candidates.append(Path(os.environ["LAKEWIDE_PROFILES_DIR"]))
    candidates += [project_root, Path.home() / ".lakewide"]
    for folder in candidates:
        if (folder / "profiles.yml").is_file():
            return folder / "profiles.yml"
    raise ConfigError("no profiles.yml found (looked in --profiles-dir, $LAKEWIDE_PROFILES_DIR, "
                      f"{project_root} and ~/.lakewide)")


def load_output(path: Path, profile: str, target: str | None = None,
                project_root: Path | None = None) -> Output:
    """Read one target of one profile; a relative hadoop warehouse resolves against the project."""
    try:
        text = Environment(undefined=StrictUndefined).from_string(
            path.read_text(encoding="utf-8")).render(env_var=env_var)
        data: Any = yaml.safe_load(text) or {}
    except ConfigError as err:
        err.path = path
        raise
    except (TemplateError, yaml.YAMLError) as err:
        raise ConfigError(f"cannot read profiles: {err}", path=path) from None
    if profile not in data:
        raise ConfigError(f"profile '{profile}' not found; profiles here: "
                          f"{', '.join(sorted(data)) or 'none'}", path=path, key=profile)
    entry = data[profile] or {}
    target = target or entry.get("target") or "dev"
    outputs = entry.get("outputs") or {}
    if target not in outputs:
        raise ConfigError(f"target '{target}' not found in profile '{profile}'; targets: "
                          f"{', '.join(sorted(outputs)) or 'none'}", path=path,
                          key=f"{profile}.outputs")
    try:
        output = Output(**(outputs[target] or {}))
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{first['msg']} (accepted keys: {', '.join(Output.model_fields)})",
                          path=path, key=f"{profile}.outputs.{target}.{key}") from None
    if output.catalog_type == "hadoop":
        root = project_root or path.parent
        warehouse = output.warehouse or "warehouse"
        if "://" not in warehouse:
            output.warehouse = str((root / warehouse).resolve())
    return output

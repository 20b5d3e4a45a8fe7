"""Files of a new project made by ``lakewide init``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from lakewide.vocabulary.errors import ConfigError

FILES = {
    "pyproject.toml": """[project]
name = {toml_name}
version = "0.1.0"
dependencies = ["lakewide"]

[tool.lakewide]
profile = {toml_name}
seed-schema = "raw"
""",
    "profiles.yml": """{yaml_name}:
  target: dev
  outputs:
    dev:
      master: "{{{{ env_var('LAKEWIDE_MASTER', 'local[2]') }}}}"
      catalog: lw
      catalog_type: hadoop
      warehouse: warehouse
      namespace: analytics
""",
    "models/sources.yml": """sources:
  - name: raw
    tables:
      - name: profiles
      - name: orders
""",
    "models/customer_wide.sql": """{{{{ config(merge_engine='partial_update', primary_key='customer_id') }}}}
SELECT customer_id, name, CAST(NULL AS BIGINT) AS order_count
FROM {{{{ source('raw', 'profiles') }}}}
UNION ALL
SELECT customer_id, CAST(NULL AS STRING), order_count
FROM {{{{ source('raw', 'orders') }}}}
""",
    "seeds/profiles.csv": "customer_id,name\n1,Ada\n2,Grace\n",
    "seeds/orders.csv": "customer_id,order_count\n1,3\n3,1\n",
    "macros/.gitkeep": "",
    ".gitignore": "target/\nwarehouse/\n",
}


@dataclass
class InitResult:
    """What ``lakewide init`` did: files written, files kept as they were, lines appended."""

    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    appended: list[Path] = field(default_factory=list)


def _append_missing_lines(path: Path, text: str) -> bool:
    """Add the lines of ``text`` that ``path`` lacks (an existing .gitignore keeps its own)."""
    current = path.read_text(encoding="utf-8")
    have = {line.strip() for line in current.splitlines()}
    missing = [line for line in text.splitlines() if line.strip() and line.strip() not in have]
    if not missing:
        return False
    separator = "" if not current or current.endswith("\n") else "\n"
    path.write_text(current + separator + "\n".join(missing) + "\n", encoding="utf-8")
    return True


def _yaml_key(name: str) -> str:
    """``name`` as a YAML key: plain when it is a plain word, else double-quoted (a JSON
    string is a YAML double-quoted scalar), so a folder named ``a"b`` or ``x: y`` stays valid."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else json.dumps(name)


def init_project(directory: Path) -> InitResult:
    """Write a starter project into ``directory`` (which must not hold a pyproject.toml).

    Existing files are never overwritten: they are kept as they are (``.gitignore`` gets the
    starter's missing lines appended), and reported so the user can merge them by hand.
    """
    if (directory / "pyproject.toml").exists():
        raise ConfigError(
            f"{directory} already has a pyproject.toml; choose an empty folder",
            path=directory / "pyproject.toml",
        )
    name = directory.resolve().name.replace("-", "_") or "lakewide_project"
    result = InitResult()
    for relative, text in FILES.items():
        path = directory / relative
        content = text.format(toml_name=json.dumps(name), yaml_name=_yaml_key(name))
        if path.exists():
            if relative == ".gitignore" and path.is_file():
                if _append_missing_lines(path, content):
                    result.appended.append(path)
                continue
            result.kept.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        result.written.append(path)
    return result

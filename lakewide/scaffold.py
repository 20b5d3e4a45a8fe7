"""Files of a new project made by ``lakewide init``."""

from __future__ import annotations

from pathlib import Path

from lakewide.errors import ConfigError

FILES = {
    "pyproject.toml": """[project]
name = "{name}"
version = "0.1.0"
dependencies = ["lakewide"]

[tool.lakewide]
profile = "{name}"
seed-schema = "raw"
""",
    "profiles.yml": """{name}:
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


def init_project(directory: Path) -> list[Path]:
    """Write a starter project into ``directory`` (which must not hold a pyproject.toml)."""
    if (directory / "pyproject.toml").exists():
        raise ConfigError(f"{directory} already has a pyproject.toml; choose an empty folder",
                          path=directory / "pyproject.toml")
    name = directory.resolve().name.replace("-", "_") or "lakewide_project"
    written = []
    for relative, text in FILES.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(name=name), encoding="utf-8")
        written.append(path)
    return written

"""CSV seeds: which files, which table, each column's type (declared in ``column_types``, else
inferred by lakewide.project.text_types, the inference unit-test CSV rows share), checked before any
load, and loading them all into their tables."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from sqlglot import exp
from sqlglot.errors import ParseError

from lakewide.project.config.specs import unknown_key
from lakewide.project.nodes import Relation
from lakewide.project.profiles import Output
from lakewide.project.settings import Project
from lakewide.project.text_files import load_yaml, read_utf8
from lakewide.project.text_types import infer_text_type
from lakewide.vocabulary.dialect import DIALECT
from lakewide.vocabulary.errors import ConfigError

ENTRY_KEYS = ("name", "column_types", "description", "config")
TYPE_EXAMPLES = "int, bigint, double, decimal(10,2), string, boolean, date, timestamp"


@dataclass(frozen=True)
class Seed:
    """One CSV file and the Iceberg table it becomes."""

    path: Path
    relation: Relation
    column_types: dict[str, str] = field(default_factory=dict)  # declared
    inferred: dict[str, str] = field(default_factory=dict)  # every column, header order

    @property
    def types(self) -> dict[str, str]:
        """Every column's type, in header order: declared in ``column_types``, else inferred."""
        return {c: self.column_types.get(c, t) for c, t in self.inferred.items()}

    def checksum(self) -> str:
        """sha256 of the CSV's bytes and the declared column types: what a seed table is
        loaded from (``manifest.json`` records it; ``--state`` compares it)."""
        digest = hashlib.sha256(self.path.read_bytes())
        digest.update(json.dumps(self.column_types, sort_keys=True).encode("utf-8"))
        return digest.hexdigest()


def seeds_to_load(
    project: Project, output: Output, tables: dict[str, Relation | None] | None
) -> list[Seed]:
    """The seeds a command loads, each with the table it loads into: its own (``tables``
    None), else the table ``tables`` gives it (``--defer``: a seed changed since the state
    goes to the target's own namespace); a seed ``tables`` maps to None is not loaded (it is
    read from production's table)."""
    found = find_seeds(project, output)
    if tables is None:
        return found
    out = []
    for seed in found:
        table = tables.get(seed.path.stem, seed.relation)
        if table is not None:
            out.append(replace(seed, relation=table))
    return out


def find_seeds(project: Project, output: Output) -> list[Seed]:
    """``seeds/*.csv``; optional ``seeds/*.yml`` entries give ``column_types`` per seed.

    Every file is checked here, before any table is written: a types file of the wrong shape,
    a type Spark does not know, a column the CSV lacks or a CSV that is not UTF-8 is an error
    naming the file and the key or line.
    """
    types: dict[str, dict[str, str]] = {}
    where: dict[str, tuple[Path, str]] = {}
    csvs: list[Path] = []
    for folder in project.seed_paths:
        if not folder.is_dir():
            continue
        csvs.extend(sorted(folder.rglob("*.csv")))
        for yml in sorted([*folder.rglob("*.yml"), *folder.rglob("*.yaml")]):
            for index, (name, column_types) in enumerate(_types_file(yml, project)):
                types[name] = column_types
                where[name] = (yml, f"seeds[{index}].column_types")
    records = {p.stem: _csv_records(p, project) for p in csvs}
    headers = {name: rows[0] for name, rows in records.items()}
    for name, column_types in types.items():
        yml, key = where[name]
        if name not in headers:
            raise ConfigError(
                f"seed '{name}' has no CSV file; seeds: {', '.join(sorted(headers)) or 'none'}",
                path=_shown(yml, project),
                key=key.rsplit(".", 1)[0] + ".name",
            )
        missing = [c for c in column_types if c not in headers[name]]
        if missing:
            raise ConfigError(
                f"column '{missing[0]}' is not in the header of {name}.csv "
                f"(columns: {', '.join(headers[name])})",
                path=_shown(yml, project),
                key=f"{key}.{missing[0]}",
            )
    namespace = project.seed_schema or output.namespace
    return [
        Seed(
            p,
            Relation(output.catalog, namespace, p.stem),
            types.get(p.stem, {}),
            _inferred(records[p.stem]),
        )
        for p in csvs
    ]


def _inferred(records: list[list[str]]) -> dict[str, str]:
    """Each header column's type from its values (project.text_types; all empty: string)."""
    header, rows = records[0], records[1:]
    return {
        name: infer_text_type(r[i] if i < len(r) else None for r in rows) or "string"
        for i, name in enumerate(header)
    }


def _shown(path: Path, project: Project) -> str:
    return project.relative(path)


def _types_file(yml: Path, project: Project) -> list[tuple[str, dict[str, str]]]:
    """The ``(seed name, column types)`` entries of one ``seeds/*.yml``, checked for shape."""
    shown = _shown(yml, project)
    try:
        data: Any = load_yaml(read_utf8(yml, shown)) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise ConfigError(
            f"invalid YAML: {getattr(err, 'problem', None) or err}",
            path=shown,
            line=mark.line + 1 if mark is not None else None,
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("seeds") or [], list):
        raise ConfigError(
            "expected `seeds:` followed by a list of {name, column_types} "
            "entries, e.g. seeds: [{name: orders, column_types: {id: bigint}}]",
            path=shown,
            key="seeds",
        )
    return [_entry(entry, shown, f"seeds[{i}]") for i, entry in enumerate(data.get("seeds") or [])]


def _entry(entry: Any, shown: str, key: str) -> tuple[str, dict[str, str]]:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ConfigError(
            "each seeds entry is a mapping with a 'name' (the CSV file's stem)", path=shown, key=key
        )
    unknown = [k for k in entry if k not in ENTRY_KEYS]
    if unknown:
        raise ConfigError(
            unknown_key(str(unknown[0]), ENTRY_KEYS), path=shown, key=f"{key}.{unknown[0]}"
        )
    column_types = entry.get("column_types") or {}
    config = entry.get("config")
    if config is not None:  # dbt's spelling: config: {column_types: {...}}
        if not isinstance(config, dict) or [k for k in config if k != "column_types"]:
            raise ConfigError(
                "the only config key of a seed lakewide reads is column_types, e.g. "
                "config: {column_types: {id: bigint}}",
                path=shown,
                key=f"{key}.config",
            )
        if column_types:
            raise ConfigError(
                "column_types is given twice (here and in config): give it once",
                path=shown,
                key=f"{key}.config.column_types",
            )
        column_types, key = config.get("column_types") or {}, f"{key}.config"
    if not isinstance(column_types, dict):
        raise ConfigError(
            "expected a mapping of column -> type, e.g. {id: bigint}",
            path=shown,
            key=f"{key}.column_types",
        )
    for column, type_name in column_types.items():
        _check_type(type_name, shown, f"{key}.column_types.{column}")
    return entry["name"], {str(k): str(v) for k, v in column_types.items()}


def _check_type(type_name: Any, shown: str, key: str) -> None:
    try:
        if not isinstance(type_name, str):
            raise ParseError("not a string")
        exp.DataType.build(type_name, dialect=DIALECT)
    except ParseError:
        raise ConfigError(
            f"'{type_name}' is not a Spark SQL type; expected one like {TYPE_EXAMPLES}",
            path=shown,
            key=key,
        ) from None


def _csv_records(path: Path, project: Project) -> list[list[str]]:
    """The CSV's records, the header of column names first (blank lines skipped, as Spark's
    reader skips them); the whole file must be UTF-8 (the line of a bad byte is named)."""
    text = read_utf8(path, _shown(path, project), encoding="utf-8-sig")
    records = [r for r in csv.reader(io.StringIO(text)) if r]
    if not records or not any(h.strip() for h in records[0]):
        raise ConfigError(
            "the first line must be a header of column names", path=_shown(path, project), line=1
        )
    twice = sorted({h for h in records[0] if records[0].count(h) > 1})
    if twice:
        raise ConfigError(
            f"column '{twice[0]}' appears twice in the header; give each column its own name",
            path=_shown(path, project),
            line=1,
        )
    return records


def line_of_value(path: Path, column: str, value: str) -> int | None:
    """The line where the first record holding ``value`` in ``column`` starts (None if none)."""
    reader = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig")))
    header = next(reader, [])
    if column not in header:
        return None
    index = header.index(column)
    start = reader.line_num + 1
    for record in reader:
        if index < len(record) and record[index] == value:
            return start
        start = reader.line_num + 1
    return None

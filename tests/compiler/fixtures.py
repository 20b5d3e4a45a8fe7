"""Reader for SQL fixture files (sqlglot style): cases of input and expected statements."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import sqlglot

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Case:
    name: str
    config: dict
    source: str
    expected: list[str]


def _statements(text: str) -> list[str]:
    return [s.strip() for s in text.split(";") if s.strip()]


def load_cases(file_name: str, *, has_input: bool = True) -> list[Case]:
    """Split a fixture file into cases at ``-- case:`` lines.

    Without ``has_input`` every statement of a case is an expected one (the input is the config).
    """
    text = (FIXTURES / file_name).read_text(encoding="utf-8")
    cases = []
    for chunk in re.split(r"^-- case: ", text, flags=re.M)[1:]:
        name, _, body = chunk.partition("\n")
        config: dict = {}
        match = re.match(r"-- config: (.*)\n", body)
        if match:
            config = json.loads(match.group(1))
            body = body[match.end() :]
        statements = _statements(body)
        if not has_input:
            cases.append(Case(name.strip(), config, "", statements))
        else:
            cases.append(Case(name.strip(), config, statements[0], statements[1:]))
    return cases


def normalize(sql: str) -> str:
    """One canonical text for a statement, so formatting differences do not matter."""
    return sqlglot.parse_one(sql, read="spark").sql("spark", pretty=True)

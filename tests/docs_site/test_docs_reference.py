"""The generated reference pages (docs/reference/commands.md, config.md) match the code.

``python -m tests.support.docs_reference`` writes them from click (every command and option) and from the
pydantic config models (every key); this test fails when a committed page drifts from them.
"""

from __future__ import annotations

import re

from tests.support.docs_reference import CLI_USAGE_PAGE, commands, pages, param_name
from tests.support.project_factory import REPO_ROOT


def test_committed_reference_pages_match_the_code() -> None:
    for path, text in pages().items():
        committed = path.read_text(encoding="utf-8") if path.exists() else ""
        assert committed == text, (
            f"{path.relative_to(REPO_ROOT)} is out of date: run python -m tests.support.docs_reference"
        )


def test_commands_page_names_every_command_and_option() -> None:
    """An oracle apart from the generator's page layout: each command is a heading and each
    option or argument of it appears in the table under that heading."""
    page = pages()[REPO_ROOT / "docs" / "reference" / "commands.md"]
    sections = dict(re.findall(r"^## `([^`]+)`\n(.*?)(?=^## |\Z)", page, re.S | re.M))
    for path, command in commands():
        assert path in sections, f"{path} has no section"
        for param in command.params:
            if param.name != "help":
                assert f"`{param_name(param)}" in sections[path], (path, param.name)


def test_cli_usage_summarises_every_command() -> None:
    usage = CLI_USAGE_PAGE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(lakewide[^`]*)` \|", usage, re.M))
    expected = {path for path, _ in commands()}
    assert listed == expected, (
        f"{CLI_USAGE_PAGE.name}: missing {sorted(expected - listed)}, stale {sorted(listed - expected)}"
    )

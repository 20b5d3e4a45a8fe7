"""The project's own text files (models, macros, YAML, profiles, seeds) read as UTF-8: a file
that is not UTF-8 is a usage error naming the file, the line and the byte, not a traceback."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from typing import Any

import yaml

from lakewide.project.user_cache import cache_folder, write_entry
from lakewide.vocabulary.errors import ConfigError

# libyaml's parser when PyYAML was built with it: ten times faster on a large sources.yml
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# a document this long is kept parsed in the user's cache: unpickling a project's properties
# costs a tenth of parsing them again, and a command parses each properties file up to 4 times
_CACHED_FROM = 4096
_YAML_KEY = f"{yaml.__version__}\0{_LOADER.__name__}\0{pickle.HIGHEST_PROTOCOL}\0"


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, parsed by libyaml when available (same documents, same
    ``yaml.YAMLError`` with the line of the problem). A long document's parse is kept in the
    user's cache folder, named by the digest of its text (``user_cache``); each call returns
    its own copy."""
    if len(text) < _CACHED_FROM:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    digest = hashlib.sha256(f"{_YAML_KEY}{text}".encode()).hexdigest()
    stored = cache_folder("yaml") / f"{digest}.pickle"
    try:
        return pickle.loads(stored.read_bytes())  # noqa: S301 - written below, from this text
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        pass  # not cached yet (or unreadable): parsed again
    data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    write_entry(stored, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return data


def read_utf8(path: Path, shown: Path | str | None = None, *, encoding: str = "utf-8") -> str:
    """The file's text; ConfigError (exit 2) at the first byte that is not UTF-8, with the
    line it is on. ``shown``: the path the error names (default: ``path``);
    ``encoding``: ``utf-8-sig`` to drop a byte-order mark."""
    data = path.read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"byte 0x{data[err.start]:02x} is not UTF-8; save the file as UTF-8 "
            "(e.g. `iconv -f latin1 -t utf-8`)",
            path=path if shown is None else shown,
            line=data.count(b"\n", 0, err.start) + 1,
        ) from None

"""Tests for lakewide.spark.jars and jackson_relocate: Jackson relocation, the jar cache, the bundled jars."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakewide.spark import jackson_relocate, jars
from lakewide.spark.jackson_relocate import relocate_class

SHADED = "org/apache/iceberg/shaded/com/fasterxml/jackson"
SHADED_DOTTED = "org.apache.iceberg.shaded.com.fasterxml.jackson"
SHADED_DOTTED = "org.apache.iceberg.shaded.com.fasterxml.jackson"
_SIZES = {
    3: 4,
    4: 4,
    5: 8,
    6: 8,
    7: 2,
    8: 2,
    9: 4,
    10: 4,
    11: 4,
    12: 4,
    15: 3,
    16: 2,
    17: 4,
    18: 4,
    19: 2,
    20: 2,
}


# ---------------------------------------------------------------- class-file helpers (independent parser)


def parse_pool(data: bytes) -> tuple[dict[int, tuple[int, bytes]], int]:
    """Constant pool as {index: (tag, body)} plus the offset where the pool ends."""
    (count,) = struct.unpack_from(">H", data, 8)
    pool: dict[int, tuple[int, bytes]] = {}
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            pool[index] = (tag, data[pos + 3 : pos + 3 + length])
            pos += 3 + length
        else:
            pool[index] = (tag, data[pos + 1 : pos + 1 + _SIZES[tag]])
            pos += 1 + _SIZES[tag]
        index += 2 if tag in (5, 6) else 1
    return pool, pos


def class_name(data: bytes) -> str:
    pool, end = parse_pool(data)
    (this_class,) = struct.unpack_from(">H", data, end + 2)
    (name_index,) = struct.unpack_from(">H", pool[this_class][1], 0)
    return pool[name_index][1].decode()


def jackson_jar(artifact: str) -> Path:
    sources, _ = jars._jackson_sources()
    return next(p for p in sources if p.name.startswith("jackson-" + artifact + "-"))


# ---------------------------------------------------------------- relocation (no JVM)


@pytest.mark.parametrize(
    "entry",
    [
        "com/fasterxml/jackson/core/JsonFactory.class",
        "com/fasterxml/jackson/core/io/NumberInput.class",  # has Long constants (two slots)
        "com/fasterxml/jackson/databind/ObjectMapper.class",  # has invokedynamic / MethodHandle
    ],
)
def test_relocate_real_class(entry: str) -> None:
    artifact = "core" if "/core/" in entry else "databind"
    with zipfile.ZipFile(jackson_jar(artifact)) as jar:
        original = jar.read(entry)
    relocated = relocate_class(original)

    assert class_name(original) == entry[: -len(".class")]
    assert class_name(relocated) == entry.replace("com/fasterxml/jackson", SHADED)[: -len(".class")]
    utf8 = [body.decode() for tag, body in parse_pool(relocated)[0].values() if tag == 1]
    mentions = [s for s in utf8 if "fasterxml" in s]
    assert mentions
    for value in mentions:
        stripped = value.replace(SHADED, "").replace(SHADED_DOTTED, "")
        assert (
            "com/fasterxml/jackson" not in stripped and "com.fasterxml.jackson" not in stripped
        ), value
    # Everything after the constant pool is index-based and must be byte-identical.
    assert relocated[parse_pool(relocated)[1] :] == original[parse_pool(original)[1] :]
    assert jackson_relocate.iter_utf8_constants(relocated) == utf8


_entries = st.one_of(
    st.tuples(
        st.just(1),
        st.sampled_from(["x", "Lcom/fasterxml/jackson/core/A;", "com.fasterxml.jackson.B", "é"]),
    ),
    st.tuples(st.sampled_from(sorted(_SIZES)), st.binary(min_size=8, max_size=8)),
)


@settings(max_examples=200, deadline=None, database=None)
@given(entries=st.lists(_entries, max_size=20), tail=st.binary(max_size=16))
def test_relocate_synthetic_pool_handles_every_tag(
    entries: list[tuple[int, Any]], tail: bytes
) -> None:
    body, expected, count = b"", [], 1
    for tag, payload in entries:
        if tag == 1:
            raw = payload.encode()
            body += struct.pack(">BH", 1, len(raw)) + raw
            expected.append(jackson_relocate.relocate_bytes(raw))
        else:
            body += bytes([tag]) + payload[: _SIZES[tag]]
        count += 2 if tag in (5, 6) else 1
    data = b"\xca\xfe\xba\xbe\x00\x00\x00\x3d" + struct.pack(">H", count) + body + tail
    out = relocate_class(data)
    pool, end = parse_pool(out)
    assert [b for t, b in pool.values() if t == 1] == expected
    assert out[end:] == tail


def test_relocate_class_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        relocate_class(b"not a class")


def test_relocate_jar_layout(tmp_path: Path) -> None:
    dest = tmp_path / "out.jar"
    jackson_relocate.relocate_jar(jars._jackson_sources()[0], dest)
    with zipfile.ZipFile(dest) as jar:
        names = set(jar.namelist())
        services = jar.read("META-INF/services/" + SHADED_DOTTED + ".core.JsonFactory").decode()
    assert jars.JACKSON_MARKER in names
    assert not [
        n for n in names if n.startswith("com/") or "module-info" in n or "META-INF/versions/" in n
    ]
    assert services.strip() == SHADED_DOTTED + ".core.JsonFactory"


# ---------------------------------------------------------------- jar cache (no JVM)


def test_relocated_jar_cached_and_rebuilt_when_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEWIDE_CACHE_DIR", str(tmp_path))
    jar = jars.relocated_jackson_jar()
    assert jar.parent == tmp_path and "2." in jar.name
    assert jars._jar_is_valid(jar)
    mtime = jar.stat().st_mtime_ns

    assert jars.relocated_jackson_jar() == jar and jar.stat().st_mtime_ns == mtime  # reused

    jar.write_bytes(b"PK\x03\x04 truncated garbage")
    assert jars.relocated_jackson_jar() == jar and jars._jar_is_valid(jar)

    with zipfile.ZipFile(jar, "w") as broken:  # a valid zip without the marker class
        broken.writestr("hello.txt", "hi")
    assert jars.relocated_jackson_jar() == jar and jars._jar_is_valid(jar)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LAKEWIDE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jars.cache_dir() == tmp_path / "xdg" / "lakewide"
    monkeypatch.setenv("LAKEWIDE_CACHE_DIR", str(tmp_path / "own"))
    assert jars.cache_dir() == tmp_path / "own"


def test_bundled_jars_exist() -> None:
    found = jars.bundled_jars()
    assert [j.exists() for j in found] == [True, True]
    assert found[0].name.startswith("iceberg-spark-runtime-3.5_2.12-")

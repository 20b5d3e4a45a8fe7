"""Relocate Jackson classes into Iceberg's shaded package (a tiny "maven-shade" in Python).

The Iceberg Spark runtime jar we bundle references
``org.apache.iceberg.shaded.com.fasterxml.jackson.*`` but does not contain those classes.
We rebuild them from the plain Jackson jars that ship with PySpark by rewriting every
``CONSTANT_Utf8`` entry of each class file's constant pool (class names, descriptors,
signatures and string literals all live there) and moving the entries to the new paths.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

OLD_PATH = b"com/fasterxml/jackson"
NEW_PATH = b"org/apache/iceberg/shaded/com/fasterxml/jackson"
OLD_NAME = b"com.fasterxml.jackson"
NEW_NAME = b"org.apache.iceberg.shaded.com.fasterxml.jackson"

_CLASS_MAGIC = b"\xca\xfe\xba\xbe"
_SERVICES = "META-INF/services/"

# Constant-pool tag -> size in bytes of the entry body after the tag (Utf8 is variable).
_FIXED_SIZES = {
    3: 4,  # Integer
    4: 4,  # Float
    5: 8,  # Long (takes two slots)
    6: 8,  # Double (takes two slots)
    7: 2,  # Class
    8: 2,  # String
    9: 4,  # Fieldref
    10: 4,  # Methodref
    11: 4,  # InterfaceMethodref
    12: 4,  # NameAndType
    15: 3,  # MethodHandle
    16: 2,  # MethodType
    17: 4,  # Dynamic
    18: 4,  # InvokeDynamic
    19: 2,  # Module
    20: 2,  # Package
}
_UTF8 = 1


def relocate_bytes(data: bytes) -> bytes:
    """Apply the Jackson package relocation to raw (modified-UTF-8 or text) bytes."""
    return data.replace(OLD_PATH, NEW_PATH).replace(OLD_NAME, NEW_NAME)


def iter_utf8_constants(class_bytes: bytes) -> list[str]:
    """Return every ``CONSTANT_Utf8`` value of a class file, in constant-pool order."""
    values: list[str] = []

    def collect(raw: bytes) -> bytes:
        values.append(raw.decode("utf-8", "replace"))
        return raw

    _walk_constant_pool(class_bytes, collect)
    return values


def relocate_class(class_bytes: bytes) -> bytes:
    """Rewrite a class file's constant pool: Jackson references point to the shaded package."""
    return _walk_constant_pool(class_bytes, relocate_bytes)


def _walk_constant_pool(class_bytes: bytes, on_utf8: Callable[[bytes], bytes]) -> bytes:
    """Copy a class file, passing each Utf8 constant through ``on_utf8``; return the new bytes."""
    if class_bytes[:4] != _CLASS_MAGIC:
        raise ValueError("not a Java class file (bad magic number)")
    (count,) = struct.unpack_from(">H", class_bytes, 8)
    out = bytearray(class_bytes[:10])
    pos = 10
    index = 1
    while index < count:
        tag = class_bytes[pos]
        if tag == _UTF8:
            (length,) = struct.unpack_from(">H", class_bytes, pos + 1)
            raw = class_bytes[pos + 3 : pos + 3 + length]
            new = on_utf8(raw)
            if len(new) > 0xFFFF:
                raise ValueError("relocated Utf8 constant exceeds 65535 bytes")
            out += struct.pack(">BH", _UTF8, len(new)) + new
            pos += 3 + length
        elif tag in _FIXED_SIZES:
            size = 1 + _FIXED_SIZES[tag]
            out += class_bytes[pos : pos + size]
            pos += size
        else:
            raise ValueError(f"unknown constant-pool tag {tag} at entry {index}")
        # Long and Double occupy two constant-pool slots.
        index += 2 if tag in (5, 6) else 1
    out += class_bytes[pos:]  # access flags, fields, methods, attributes: index-based, untouched
    return bytes(out)


def _target_name(name: str) -> str | None:
    """New entry name for ``name`` in the relocated jar, or None to drop the entry."""
    if name.endswith("/") or name.startswith(("META-INF/versions/", "META-INF/maven/")):
        return None
    if name.endswith("module-info.class") or name == "META-INF/MANIFEST.MF":
        return None
    upper = name.upper()
    if upper.startswith("META-INF/") and upper.endswith((".SF", ".DSA", ".RSA", ".EC")):
        return None
    if name.startswith(_SERVICES):
        return _SERVICES + relocate_bytes(name[len(_SERVICES) :].encode()).decode()
    return relocate_bytes(name.encode()).decode()


def relocate_jar(sources: list[Path], dest: Path) -> None:
    """Write ``dest``: the relocated union of the Jackson jars in ``sources``.

    Service files with the same (relocated) name are concatenated; for any other
    duplicate entry the first source wins. ``dest`` is written in place: callers that
    need atomicity write to a temp file and ``os.replace`` it.
    """
    entries: dict[str, bytes] = {}
    for source in sources:
        with zipfile.ZipFile(source) as zin:
            for info in zin.infolist():
                target = _target_name(info.filename)
                if target is None:
                    continue
                data = zin.read(info)
                if info.filename.endswith(".class"):
                    data = relocate_class(data)
                elif info.filename.startswith(_SERVICES):
                    data = relocate_bytes(data)
                    if target in entries:
                        data = entries[target].rstrip(b"\n") + b"\n" + data
                        entries[target] = data
                        continue
                if target not in entries:
                    entries[target] = data
    manifest = b"Manifest-Version: 1.0\r\nCreated-By: lakewide jackson_relocate\r\n\r\n"
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        zout.writestr(_entry("META-INF/MANIFEST.MF"), manifest)
        for name in sorted(entries):
            zout.writestr(_entry(name), entries[name])


def _entry(name: str) -> zipfile.ZipInfo:
    """A zip entry with a fixed timestamp, so the output is reproducible."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    return info

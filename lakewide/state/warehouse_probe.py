"""``lakewide debug``'s storage check: a small object written, read back and deleted in the
warehouse, before Spark starts (a clear RuntimeSetupError, exit 2, when any step fails).

An ``s3://`` warehouse is probed with signed requests (lakewide.state.s3_objects: the profile's
``s3_*`` keys, else the AWS_* environment variables); a local folder with plain file I/O. The
object is ``<warehouse>/.lakewide-debug-<random>``; a failure says which step failed (write, read
back, delete) and what to check, never a secret.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from lakewide.project.profiles import Output, warehouse_path
from lakewide.state.s3_objects import S3Client, S3RequestError, is_s3
from lakewide.vocabulary.errors import RuntimeSetupError

_NOT_CHECKED = "not checked"


def not_checked(why: str, location: str = "") -> str:
    """The line of a storage check that was not made, and why."""
    return f"storage: {location + ' ' if location else ''}{_NOT_CHECKED} ({why})"


def is_unchecked(line: str) -> bool:
    """Whether ``line`` (of ``probe_warehouse``) says the storage was not checked."""
    return line.startswith("storage: ") and f"{_NOT_CHECKED} (" in line


def probe_warehouse(output: Output, location: str | None) -> str:
    """Write, read and delete a small object under ``location`` (the warehouse); one line
    saying what was checked, or why nothing was (``is_unchecked``)."""
    if not location:
        return not_checked("the catalog names no warehouse location")
    name = f".lakewide-debug-{secrets.token_hex(6)}"
    payload = b"lakewide debug probe\n"
    if is_s3(location):
        client = S3Client.of(output)
        if client is None:
            return not_checked(
                "no s3_access_key_id in the profile nor AWS_ACCESS_KEY_ID; Spark's S3FileIO "
                "uses the AWS default credential chain",
                location,
            )
        target = location.rstrip("/") + "/" + name
        step = "write"
        try:
            client.request("PUT", target, payload)
            step = "read back"
            if client.request("GET", target) != payload:
                raise RuntimeSetupError(f"storage: {target} read back other bytes than written")
            step = "delete"
            client.request("DELETE", target)
        except S3RequestError as err:
            raise RuntimeSetupError(
                f"storage: could not {step} a test object in the warehouse {location}: "
                f"{err.message}"
            ) from None
        where = client.endpoint or f"AWS {client.region}"
        return f"storage: wrote, read and deleted a test object in {location} ({where})"
    folder = warehouse_path(location)
    if folder is None:
        return not_checked("only s3:// and local warehouses are", location)
    if not folder.is_dir():
        return f"storage: {folder} does not exist yet (the first write creates it)"
    return _probe_folder(folder / name, payload)


def _probe_folder(path: Path, payload: bytes) -> str:
    step = "write"
    try:
        path.write_bytes(payload)
        step = "read back"
        if path.read_bytes() != payload:
            raise RuntimeSetupError(f"storage: {path} read back other bytes than written")
        step = "delete"
        path.unlink()
    except OSError as err:
        raise RuntimeSetupError(
            f"storage: could not {step} a test file in the warehouse {path.parent}: "
            f"{err.strerror or err}"
        ) from None
    return f"storage: wrote, read and deleted a test file in {path.parent}"

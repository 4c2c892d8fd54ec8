"""Which code an installed distribution is: one hash of the files its wheel carried, read from disk now.

A distribution's `RECORD` lists every file its installer wrote, each with that file's sha256. The
bytes of `RECORD` itself identify an install, not the code: pip lists in it `direct_url.json` (which
holds the absolute path of the wheel it installed from) and the console scripts it wrote (whose first
line names the venv's Python), so two clean installs of one wheel give two RECORDs, and editing an
installed file leaves RECORD as it was.

`files_sha256` is the sha256 of the lines `PATH SHA256\n`, sorted by path, of the files the wheel
carried (RECORD's entries with a hash, inside the install root, without the installer's own
dist-info files), each hashed from its bytes on disk. Two installs of one wheel give the same value,
which `wheel_files_sha256` computes from the wheel archive itself; an edited file changes it, and
the file is named under `modified` (its hash is not RECORD's). An editable install's files are its
source folder (evalkit's own: the header's git sha): it is noted as `editable` and not hashed.

This module uses the standard library alone: `evalkit.backends.phase_packages` runs its source in a
server phase's own interpreter, where evalkit may not be installed.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import zipfile
from importlib.metadata import Distribution
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["installed_files", "wheel_files_sha256"]

# what the installer writes into the dist-info folder itself (not in the wheel)
_INSTALLER_FILES = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


def _digest(hashes: dict[str, str]) -> str:
    # sorted by path: the install order, and so RECORD's order, must not change the value
    lines = "".join(f"{path} {hashes[path]}\n" for path in sorted(hashes))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _from_wheel(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if not parts or parts[0] == ".." or path.startswith("/"):
        return False  # outside the install root: scripts, headers, data written for this venv
    return not (len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in _INSTALLER_FILES)


def _editable(dist: Distribution) -> bool:
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    return bool((direct.get("dir_info") or {}).get("editable"))


def _record(dist: Distribution) -> list[tuple[str, str, str]]:
    """RECORD's `(path, algorithm, hash)` rows, read here: `Distribution.files` leaves out the files
    that are missing on disk from Python 3.12 on (importlib.metadata's `skip_missing_files`)."""
    rows = csv.reader((dist.read_text("RECORD") or "").splitlines())
    out = []
    for row in rows:
        if len(row) >= 2 and "=" in row[1]:
            algorithm, _, value = row[1].partition("=")
            out.append((row[0], algorithm, value))
    return out


def installed_files(dist: Distribution) -> dict[str, Any]:
    """`{"files_sha256": ..., "files": N}`, with `modified` and `missing` (paths) when some file is
    not as RECORD says; `{"editable": True}` for an editable install; `{}` without a RECORD."""
    if _editable(dist):
        return {"editable": True}
    hashes: dict[str, str] = {}
    modified: list[str] = []
    missing: list[str] = []
    for path, algorithm, expected in _record(dist):
        # an entry without a sha256 is one the installer wrote itself (RECORD lists itself unhashed)
        if algorithm != "sha256" or not _from_wheel(path):
            continue
        try:
            data = Path(str(dist.locate_file(path))).read_bytes()
        except OSError:
            missing.append(path)
            continue
        digest = hashlib.sha256(data).digest()
        # the hash of the bytes on disk, not RECORD's: an edited file must change `files_sha256`
        hashes[path] = digest.hex()
        # RECORD spells a hash as unpadded URL-safe base64 (the wheel format's own spelling)
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != expected:
            modified.append(path)
    if not hashes and not missing:
        return {}
    out: dict[str, Any] = {"files_sha256": _digest(hashes), "files": len(hashes)}
    if modified:
        out["modified"] = sorted(modified)
    if missing:
        out["missing"] = sorted(missing)
    return out


def wheel_files_sha256(wheel: str | Path) -> str:
    """`files_sha256` of what installing `wheel` gives, computed from the archive's bytes."""
    hashes: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            parts = PurePosixPath(info.filename).parts
            # the wheel's RECORD (and its signatures) describe the archive; the installer writes its own
            if info.is_dir() or (parts[0].endswith(".dist-info") and parts[-1].startswith("RECORD")):
                continue
            if parts[0].endswith(".data"):
                continue  # installed elsewhere (scripts, headers): not among the hashed files
            hashes[info.filename] = hashlib.sha256(archive.read(info)).hexdigest()
    return _digest(hashes)

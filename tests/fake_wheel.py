"""A minimal installable wheel built here (not anyone's real code): for the install script's and the
installed-files hash's tests, which must not need the package index."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

__all__ = ["fake_wheel"]


def fake_wheel(folder: Path, version: str, name: str = "forge-guardrails", module: str = "forge_fake") -> Path:
    """`folder/<name>-<version>-py3-none-any.whl`, providing the package `module` and a console script."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = {
        f"{module}/__init__.py": b"# not Forge\n",
        f"{module}/core.py": b"def main() -> None:\n    print('fake')\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\n{module}-cli = {module}.core:main\n".encode(),
    }
    lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{path},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = ("\n".join([*lines, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel

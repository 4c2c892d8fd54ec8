#!/usr/bin/env bash
# Forge (PyPI forge-guardrails) in its own Python 3.12 venv, one per version: .forge/<VERSION>/.
# Usage: bash scripts/install-forge.sh [VERSION]   (default 0.10.0; idempotent)
#
# - Every forge-guardrails release needs Python >= 3.12: the interpreter comes from
#   scripts/find-python312.sh, which fails with one line naming where it looked.
# - The wheel is downloaded into .forge/wheels/ and installed from there, pinned; where it came from
#   (its index URL) and its sha256 are written to .forge/<VERSION>/forge-wheel.json, which a results
#   header can name (format: docs/guards.md, "Forge"; reader: evalkit.results.forge_wheel).
# - evalkit itself is installed editable into the same venv, so the in-process `forge` strategy runs
#   there: .forge/<VERSION>/bin/evalkit run CONFIG. The proxy: .forge/<VERSION>/bin/python -m forge.proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="${1:-0.10.0}"
if ! [[ "$VERSION" =~ ^[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?$ ]]; then
  echo "install-forge: '$VERSION' is not a release number (e.g. 0.10.0)" >&2
  exit 2
fi
VENV=".forge/$VERSION"
WHEELS=".forge/wheels"
INFO="$VENV/forge-wheel.json"

installed() {  # forge-guardrails==VERSION and evalkit are importable in the venv, and the record exists
  [ -x "$VENV/bin/python" ] && [ -f "$INFO" ] && "$VENV/bin/python" - "$VERSION" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert version("forge-guardrails") == sys.argv[1]
import evalkit, forge.guardrails  # noqa: F401,E401
EOF
}

if installed; then
  echo "install-forge: forge-guardrails $VERSION already installed in $VENV"
  exit 0
fi

PY312="$(bash scripts/find-python312.sh)" || exit 2
echo "install-forge: forge-guardrails $VERSION into $VENV (Python: $PY312)"
mkdir -p "$WHEELS"
[ -x "$VENV/bin/python" ] || "$PY312" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)

# Where pip finds the wheel (its URL and the index's hash), without installing anything yet.
REPORT="$(mktemp)"
trap 'rm -f "$REPORT"' EXIT
"${PIP[@]}" install --quiet --dry-run --ignore-installed --no-deps --only-binary=:all: \
  --report "$REPORT" "forge-guardrails==$VERSION"
"${PIP[@]}" download --quiet --no-deps --only-binary=:all: --dest "$WHEELS" "forge-guardrails==$VERSION"

"$VENV/bin/python" - "$VERSION" "$REPORT" "$WHEELS" "$INFO" <<'EOF'
import hashlib, json, sys
from pathlib import Path

version, report, wheels, info = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
item = json.loads(report.read_text())["install"][0]
url = item["download_info"]["url"]
wheel = wheels / url.rsplit("/", 1)[-1].split("#", 1)[0]
sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
index_sha256 = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256")
if index_sha256 and index_sha256 != sha256:
    sys.exit(f"install-forge: {wheel} has sha256 {sha256}, the index says {index_sha256}")
record = {
    "package": "forge-guardrails",
    "version": version,
    "wheel": wheel.name,
    "sha256": sha256,
    "url": url if url.startswith(("https://", "http://")) else None,  # never a path of this machine
    "requires_python": item["metadata"].get("requires_python"),
    "python": ".".join(map(str, sys.version_info[:3])),
}
info.write_text(json.dumps(record, indent=2) + "\n")
print(f"install-forge: {wheel.name} sha256 {sha256}")
EOF

"${PIP[@]}" install --quiet "$WHEELS/$(sed -n 's/.*"wheel": "\(.*\)".*/\1/p' "$INFO")"
"${PIP[@]}" install --quiet -e .
installed || { echo "install-forge: $VENV does not import forge-guardrails $VERSION and evalkit after installing" >&2; exit 1; }
echo "install-forge: done. In process: $VENV/bin/evalkit run CONFIG; proxy: $VENV/bin/python -m forge.proxy --help"

#!/usr/bin/env bash
# Forge (PyPI forge-guardrails) in its own Python 3.12 venv, one per version: .forge/<VERSION>/.
# Usage: bash scripts/install-forge.sh [VERSION]   (default $FORGE_VERSION, else 0.10.0; idempotent)
#
# - Every forge-guardrails release needs Python >= 3.12: the interpreter comes from
#   scripts/find-python312.sh, which fails with one line naming where it looked.
# - VERSION is a release number naming a folder directly under .forge/ (no path, no option).
# - The releases in PINNED install only as the wheel of that sha256 (pip --require-hashes): the
#   hashes of the wheels PyPI serves (docs/guards.md, "Forge"). Any other release installs the wheel
#   the index serves, and the script says so.
# - The wheel is downloaded into .forge/wheels/ and installed from there; where it came from (its index
#   URL), its sha256 and whether it was pinned are written to .forge/<VERSION>/forge-wheel.json, which a
#   results header can name (format: docs/guards.md, "Forge"; reader: evalkit.results.forge_wheel).
# - A venv whose creation was cut short (no working pip) is made again.
# - evalkit itself is installed editable into the same venv, so the in-process `forge` strategy runs
#   there: .forge/<VERSION>/bin/evalkit run CONFIG. The proxy: .forge/<VERSION>/bin/python -m forge.proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A PINNED=(
  [0.7.3]=4bace81df36b97090613bf65dc9aaea2d4b0eb7a438110ef08ac9e6d5ad696ec
  [0.10.0]=463e8115cbcb6a0389759c0fc97d63c825481664b404609e4e1e6d99320239c9
)

VERSION="${1:-${FORGE_VERSION:-0.10.0}}"
if ! [[ "$VERSION" =~ ^[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?$ ]]; then
  echo "install-forge: '$VERSION' is not a release number (e.g. 0.10.0)" >&2
  exit 2
fi
VENV=".forge/$VERSION"
mkdir -p .forge
# a folder directly under .forge/, not a link to somewhere else
if [ -L "$VENV" ] || [ "$(realpath -m "$VENV/..")" != "$(realpath .forge)" ]; then
  echo "install-forge: $VENV is not a folder under .forge/ (a link?); remove it or choose another version" >&2
  exit 2
fi
WHEELS=".forge/wheels"
INFO="$VENV/forge-wheel.json"

installed() {  # forge-guardrails==VERSION and evalkit are importable in the venv, and the record exists
  [ -x "$VENV/bin/python" ] && [ -f "$INFO" ] && "$VENV/bin/python" - "$VERSION" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert version("forge-guardrails") == sys.argv[1]
import evalkit, forge.guardrails  # noqa: F401,E401
PY
}

if installed; then
  echo "install-forge: forge-guardrails $VERSION already installed in $VENV"
  exit 0
fi

PY312="$(bash scripts/find-python312.sh)" || exit 2
echo "install-forge: forge-guardrails $VERSION into $VENV (Python: $PY312)"
mkdir -p "$WHEELS"
if [ -e "$VENV" ] && ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  # `python -m venv` cut short leaves bin/python without pip: every later pip call would fail
  echo "install-forge: $VENV is half-made (its Python has no working pip): making it again"
  rm -rf "$VENV"
fi
[ -x "$VENV/bin/python" ] || "$PY312" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)

PIN="${PINNED[$VERSION]:-}"
REQUIRE=()
if [ -n "$PIN" ]; then
  echo "install-forge: forge-guardrails $VERSION is pinned to the wheel of sha256 $PIN"
  REQUIRE=(--require-hashes -r "$VENV/pinned.txt")
  echo "forge-guardrails==$VERSION --hash=sha256:$PIN" >"$VENV/pinned.txt"
else
  echo "install-forge: no pinned hash for forge-guardrails $VERSION (pinned: ${!PINNED[*]}): installing the wheel the index serves, its sha256 recorded"
fi

# Where pip finds the wheel (its URL and the index's hash), without installing anything yet.
REPORT="$(mktemp)"
trap 'rm -f "$REPORT"' EXIT
"${PIP[@]}" install --quiet --dry-run --ignore-installed --no-deps --only-binary=:all: \
  --report "$REPORT" "forge-guardrails==$VERSION"
if [ -n "$PIN" ]; then
  "${PIP[@]}" download --quiet --no-deps --only-binary=:all: --dest "$WHEELS" "${REQUIRE[@]}"
else
  "${PIP[@]}" download --quiet --no-deps --only-binary=:all: --dest "$WHEELS" "forge-guardrails==$VERSION"
fi

"$VENV/bin/python" - "$VERSION" "$REPORT" "$WHEELS" "$INFO" "$PIN" <<'PY'
import hashlib, json, sys
from pathlib import Path

version, report, wheels, info, pin = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
item = json.loads(report.read_text())["install"][0]
url = item["download_info"]["url"]
wheel = wheels / url.rsplit("/", 1)[-1].split("#", 1)[0]
sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
index_sha256 = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256")
if index_sha256 and index_sha256 != sha256:
    sys.exit(f"install-forge: {wheel} has sha256 {sha256}, the index says {index_sha256}")
if pin and pin != sha256:
    sys.exit(f"install-forge: {wheel} has sha256 {sha256}, the pinned one is {pin}")
record = {
    "package": "forge-guardrails",
    "version": version,
    "wheel": wheel.name,
    "sha256": sha256,
    "url": url if url.startswith(("https://", "http://")) else None,  # never a path of this machine
    "requires_python": item["metadata"].get("requires_python"),
    "python": ".".join(map(str, sys.version_info[:3])),
    "pinned": bool(pin),
}
info.write_text(json.dumps(record, indent=2) + "\n")
print(f"install-forge: {wheel.name} sha256 {sha256}")
PY

WHEEL="$WHEELS/$(sed -n 's/.*"wheel": "\(.*\)".*/\1/p' "$INFO")"
if [ -n "$PIN" ]; then  # the pinned wheel alone, by its hash; then its dependencies (httpx, pydantic, tomli-w)
  echo "$PWD/$WHEEL --hash=sha256:$PIN" >"$VENV/pinned.txt"
  "${PIP[@]}" install --quiet --no-deps --require-hashes -r "$VENV/pinned.txt"
fi
"${PIP[@]}" install --quiet "$WHEEL"
"${PIP[@]}" install --quiet -e .
installed || { echo "install-forge: $VENV does not import forge-guardrails $VERSION and evalkit after installing" >&2; exit 1; }
echo "install-forge: done. In process: $VENV/bin/evalkit run CONFIG; proxy: $VENV/bin/python -m forge.proxy --help"

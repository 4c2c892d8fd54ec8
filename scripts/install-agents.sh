#!/usr/bin/env bash
# The Python agents under test, each in a venv of its own from PyPI, pinned: .agents/<name>/.
# Usage: bash scripts/install-agents.sh [NAME[@VERSION] ...]   (default: every Python agent; idempotent)
#
#   pydantic-ai     pydantic-ai-slim[openai,mcp]==2.68.0
#   openai-agents   openai-agents==0.24.0
#
# NAME@VERSION installs another release beside the pinned one, in .agents/<name>-<version>/ (point a
# config's agent entry at it with `options: {venv: ...}`). Each venv gets .agents/<dir>/evalkit-agent.json:
# name, package, version and the install hash (sha256 of the venv's `pip freeze`), which the results
# header records. The drivers the venvs run are evalkit/agents/drivers/*.py; evalkit is not installed there.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A PACKAGE=([pydantic-ai]="pydantic-ai-slim" [openai-agents]="openai-agents")
declare -A EXTRAS=([pydantic-ai]="[openai,mcp]" [openai-agents]="")
declare -A PINNED=([pydantic-ai]="2.68.0" [openai-agents]="0.24.0")
PYTHON="${PYTHON:-python3}"

install_one() {
  local name="${1%%@*}" version="" dir
  [[ "$1" == *@* ]] && version="${1#*@}"
  if [ -z "${PACKAGE[$name]:-}" ]; then
    echo "install-agents: unknown agent '$name' (known: ${!PACKAGE[*]})" >&2
    exit 2
  fi
  if [ -n "$version" ] && ! [[ "$version" =~ ^[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?$ ]]; then
    echo "install-agents: '$version' is not a release number (e.g. ${PINNED[$name]})" >&2
    exit 2
  fi
  dir=".agents/$name${version:+-$version}"
  version="${version:-${PINNED[$name]}}"
  local requirement="${PACKAGE[$name]}${EXTRAS[$name]}==$version"
  if [ -f "$dir/evalkit-agent.json" ] && grep -q "\"version\": \"$version\"" "$dir/evalkit-agent.json"; then
    echo "install-agents: $name $version already installed in $dir"
    return
  fi
  echo "install-agents: $requirement into $dir"
  [ -x "$dir/bin/python" ] || "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$requirement"
  "$dir/bin/python" - "$name" "${PACKAGE[$name]}" "$version" "$requirement" "$dir/evalkit-agent.json" <<'PY'
import hashlib, json, subprocess, sys
from importlib.metadata import version as installed

name, package, version, requirement, record = sys.argv[1:]
if installed(package) != version:
    sys.exit(f"install-agents: {package} {installed(package)} installed, {version} asked")
freeze = subprocess.run([sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True)
lines = sorted(line for line in freeze.stdout.splitlines() if line.strip())
info = {
    "name": name,
    "package": package,
    "version": version,
    "requirement": requirement,
    "install_hash": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16],
    "python": ".".join(map(str, sys.version_info[:3])),
}
with open(record, "w", encoding="utf-8") as out:
    out.write(json.dumps(info, indent=2) + "\n")
print(f"install-agents: {name} {version}, install hash {info['install_hash']}")
PY
}

# each argument is one agent: no word splitting, so "pydantic-ai@2.60.0 x" is refused, not two installs
[ "$#" -gt 0 ] || set -- pydantic-ai openai-agents
for agent in "$@"; do install_one "$agent"; done

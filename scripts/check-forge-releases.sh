#!/usr/bin/env bash
# Which forge-guardrails releases install and start on Python 3.12: for each VERSION (default: every
# release from 0.4.0 to 0.10.0), a throwaway venv, `pip install forge-guardrails==VERSION`, then
# `python -m forge.proxy --help`; one line per release with the proxy flags evalkit's configs use and
# whether its Guardrails has the tool_error action. The table in docs/guards.md ("Forge releases")
# came from this script. Usage: bash scripts/check-forge-releases.sh [VERSION...]
set -euo pipefail
cd "$(dirname "$0")/.."

PY312="$(bash scripts/find-python312.sh)" || exit 2
if [ "$#" -eq 0 ]; then
  set -- 0.4.0 0.4.1 0.4.2 0.4.3 0.5.0 0.6.0 0.7.0 0.7.1 0.7.2 0.7.3 0.7.4 0.7.5 0.7.6 \
    0.8.0 0.8.1 0.8.2 0.8.3 0.9.0 0.9.1 0.9.2 0.9.3 0.9.4 0.9.5 0.10.0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

for version in "$@"; do
  venv="$WORK/$version"
  "$PY312" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "forge-guardrails==$version" \
    >"$WORK/install.log" 2>&1; then
    echo "$version: does not install ($(tail -1 "$WORK/install.log"))"
    continue
  fi
  if ! timeout 60 "$venv/bin/python" -m forge.proxy --help >"$WORK/help.log" 2>&1; then
    echo "$version: installs; python -m forge.proxy --help fails ($(tail -1 "$WORK/help.log"))"
    continue
  fi
  flags="$(grep -o -- '--inject-respond-tool\|--no-rescue\|--max-retries\|--max-tool-errors' "$WORK/help.log" | sort -u | tr '\n' ' ')"
  actions="$("$venv/bin/python" -c 'import typing; from forge.guardrails import CheckResult
print(" ".join(typing.get_args(typing.get_type_hints(CheckResult)["action"])))')"
  echo "$version: installs and starts; proxy flags: ${flags% }; Guardrails actions: $actions"
  rm -rf "$venv"
done

#!/usr/bin/env bash
# Print the path of a Python 3.12 interpreter, or fail with one line naming where it looked.
# Used by scripts/install-forge.sh and .ci/run (forge-guardrails needs Python >= 3.12; evalkit runs on
# 3.11 and 3.12). Looked for, in order:
#   1. $PYTHON312, if set (it must be a 3.12);
#   2. `python3.12` on PATH, if it runs (pyenv's shim refuses unless a 3.12 is selected);
#   3. pyenv's installed 3.12.x under `pyenv root` (or ~/.pyenv), newest first.
set -euo pipefail

is_312() {
  "$1" -c 'import sys; raise SystemExit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1
}

if [ -n "${PYTHON312:-}" ]; then
  if is_312 "$PYTHON312"; then
    command -v "$PYTHON312"
    exit 0
  fi
  echo "find-python312: \$PYTHON312=$PYTHON312 is not a working Python 3.12" >&2
  exit 1
fi

if command -v python3.12 >/dev/null 2>&1 && is_312 python3.12; then
  python3.12 -c 'import sys; print(sys.executable)'
  exit 0
fi

root="$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")"
for candidate in $(ls -d "$root"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -rV); do
  if is_312 "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done

echo "find-python312: no Python 3.12 found (looked for \$PYTHON312, python3.12 on PATH, $root/versions/3.12.*/bin/python3.12); install one, e.g. 'pyenv install 3.12'" >&2
exit 1

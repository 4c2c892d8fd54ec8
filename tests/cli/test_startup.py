"""Start-up hygiene of the command line: `--version`, help lines that match their modules, and no
heavy import (scipy, matplotlib, pandas) on the way to `--help`, `list` or `validate`.

Speed itself is measured in benchmarks/startup.py; here only what is imported, which does not
depend on how busy the machine is.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import __version__
from evalkit.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "matplotlib", "pandas")

_PROBE = """
import json, sys
watched = set(json.loads(sys.argv[2]))
sys.argv = ["evalkit", *json.loads(sys.argv[1])]
from evalkit.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(name for name in watched if name in sys.modules)), file=sys.stderr)
"""


def _heavy_imports(argv: list[str], watched: tuple[str, ...] = HEAVY) -> list[str]:
    """Which of the `watched` modules `evalkit ARGV` imported, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv), json.dumps(watched)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return list(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["list", "scenarios"],
        ["validate", "scenarios"],
        ["validate", "configs/default.yaml"],
        ["run", "--help"],
        ["report", "--help"],
    ],
)
def test_start_up_imports_no_heavy_module(argv: list[str]) -> None:
    assert _heavy_imports(argv) == []


@pytest.mark.parametrize(
    "argv", [["--help"], ["list", "backends"], ["list", "strategies"], ["validate", "configs/default.yaml"]]
)
def test_listing_and_validating_import_no_http_client(argv: list[str]) -> None:
    """The backend registry imports every backend class; their modules load httpx on their first call."""
    assert _heavy_imports(argv, ("httpx", "aiohttp")) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "results/compare-models.jsonl", "-o", "{tmp}/r.html"],
        ["gate", "--baseline", "results/adr013.jsonl", "--candidate", "results/adr013.jsonl"],
    ],
)
def test_report_and_gate_leave_scipy_stats_unimported(argv: list[str], tmp_path: Path) -> None:
    """Their statistics use scipy.special's binomial: importing scipy.stats cost every report 0.35 s."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert _heavy_imports(args, ("scipy.stats",)) == []
    assert argv[0] != "report" or (tmp_path / "r.html").exists()


def test_importing_the_cli_imports_nothing_heavy() -> None:
    assert _heavy_imports([]) == []  # argparse's usage error, after `import evalkit.cli`


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"evalkit {__version__}"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _help_lines(parser: argparse.ArgumentParser) -> dict[str, str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: str(choice.help) for choice in action._choices_actions}


def test_the_lazy_parser_lists_what_the_full_parser_does() -> None:
    """`evalkit.cli.COMMANDS` is the one list of subcommands: each has its module, each module is
    listed, and a command's own parser (its module imported) equals the full parser's."""
    modules = sorted(p.name.removesuffix("_cmd.py") for p in (ROOT / "evalkit" / "cli").glob("*_cmd.py"))
    assert modules == sorted(COMMANDS)
    full, lazy = build_parser(full=True), build_parser()
    assert _help_lines(full) == _help_lines(lazy) == COMMANDS
    assert list(_subcommands(full)) == list(COMMANDS)
    for name in COMMANDS:  # the command's own parser, with its options, once it is the one named
        own = _subcommands(build_parser(name))[name].format_help()
        assert own == _subcommands(full)[name].format_help()


def test_a_run_without_a_report_draws_nothing(tmp_path: Path) -> None:
    """`run` prints a terminal summary: the report's renderers (jinja2, matplotlib) cost a run 35 MB."""
    out = tmp_path / "r.jsonl"
    heavy = _heavy_imports(["run", "configs/default.yaml", "-n", "1", "-o", str(out)])
    assert out.exists()
    assert "matplotlib" not in heavy


def test_a_markdown_report_needs_no_template_engine(tmp_path: Path) -> None:
    """The markdown renderer shares the HTML one's number formats (`report/formats.py`), not its jinja2."""
    out = tmp_path / "r.md"
    argv = ["report", "results/compare-models.jsonl", "--format", "markdown", "-o", str(out)]
    assert _heavy_imports(argv, ("jinja2",)) == []
    assert out.exists()

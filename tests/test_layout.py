"""The package's layout and style rules, checked in CI (scripts/check_layout.py states the rules)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import check_layout  # noqa: E402


def test_the_layout_rules_hold() -> None:
    assert check_layout.problems() == []


def test_an_upward_import_is_found(tmp_path: Path) -> None:
    """The checker sees a function-level import that points up a layer (and the circle it makes)."""
    module = ROOT / "evalkit" / "stats" / "proportions.py"
    source = module.read_text(encoding="utf-8")
    probe = tmp_path / "proportions.py"
    probe.write_text(source + "\n\ndef _up() -> None:\n    from evalkit.gate.comparison import compare  # noqa\n")
    known = check_layout.modules()
    found = check_layout.imports(probe, known, name="evalkit.stats.proportions")
    assert "evalkit.gate.comparison" in found
    assert check_layout.layer("evalkit.gate.comparison") > check_layout.layer("evalkit.stats.proportions")


@pytest.mark.parametrize("line", ["from evalkit import __version__", "import evalkit", "from evalkit import RunConfig"])
def test_an_import_of_the_package_root_is_found(tmp_path: Path, line: str) -> None:
    """The root package is the top layer: `run/` and `scenario/` took `__version__` from it, and the
    checker saw no arrow (it knew the root only as `evalkit.__init__`)."""
    probe = tmp_path / "cache.py"
    probe.write_text(f"{line}\n")
    known = check_layout.modules()
    assert check_layout.imports(probe, known, name="evalkit.scenario.cache") == {"evalkit.__init__"}
    assert check_layout.layer("evalkit.__init__") > check_layout.layer("evalkit.scenario.cache")


def test_a_submodule_taken_from_the_root_is_that_submodule(tmp_path: Path) -> None:
    probe = tmp_path / "cache.py"
    probe.write_text("from evalkit import errors\nimport evalkit.chat\n")
    found = check_layout.imports(probe, check_layout.modules(), name="evalkit.scenario.cache")
    assert found == {"evalkit.errors", "evalkit.chat"}


def test_no_module_imports_the_package_root() -> None:
    """`__version__` lives below every layer (evalkit/_version.py); only `python -m evalkit` sits above the root."""
    known = check_layout.modules()
    importers = {m for m, p in known.items() if "evalkit.__init__" in check_layout.imports(p, known)}
    assert importers <= {"evalkit.__main__"}
    assert check_layout.layer("evalkit._version") == 0


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert check_layout.cycles(graph) == [["a", "b", "c"]]


def test_a_name_taken_through_a_reexport_is_found(tmp_path: Path) -> None:
    """One path per name: a package's re-export, another module's import and a module attribute
    (`stats.wilson`) are each found, with the module to import from instead."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from evalkit.results import load_results\n"
        "from evalkit.results.reader import parse_record\n"
        "from evalkit.strategies.base import ExecutedCall\n"
        "from evalkit import stats\n"
        "stats.wilson(1, 2)\n"
        "stats.exact.binom_pmf\n"
    )
    found = check_layout.file_import_problems(probe, check_layout.modules())
    assert found == [
        "1: load_results taken from evalkit.results; import it from evalkit.results.reader",
        "3: ExecutedCall taken from evalkit.strategies.base; import it from evalkit.chat",
        "5: wilson taken from evalkit.stats; import it from evalkit.stats.proportions",
    ]


def test_a_private_name_imported_from_another_module_is_found(tmp_path: Path) -> None:
    """`run/rescore.py` took `_git_sha` from the runner, `report/calibration.py` `_to_svg` from plots."""
    probe = tmp_path / "rescore.py"
    probe.write_text(
        "from evalkit._model import StrictModel\nfrom evalkit._version import __version__\n"
        "from evalkit.report.plots import _GROUP_COLOURS\n"
    )
    found = check_layout.private_imports({**check_layout.modules(), "evalkit.run.rescore": probe})
    assert [line for line in found if line.startswith("evalkit.run.rescore")] == [
        "evalkit.run.rescore:3: imports _GROUP_COLOURS, private to evalkit.report.plots"
    ]


def test_a_compatibility_layer_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "imports.py"
    probe.write_text('MOVED_MODULES: dict[str, str] = {"evalkit.old": "evalkit.new"}\n')
    assert check_layout.compatibility_layers({"evalkit._imports": probe}) == [
        "evalkit._imports: keeps MOVED_MODULES (rename a moved module everywhere instead)"
    ]


def test_a_module_that_reexports_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "base.py"
    probe.write_text('from evalkit.chat import ExecutedCall\n\n__all__ = ["ExecutedCall", "Here"]\nHere = 1\n')
    known = {**check_layout.modules(), "evalkit.strategies.base": probe}
    found = [line for line in check_layout.stray_exports(known) if line.startswith("evalkit.strategies.base")]
    assert found == ["evalkit.strategies.base: __all__ re-exports ExecutedCall (import it from evalkit.chat)"]


def test_a_backend_outside_the_backends_folder_is_found(tmp_path: Path) -> None:
    """rescore and sim fit each kept a backend of their own; stored answers are one backend now."""
    probe = tmp_path / "rescore.py"
    probe.write_text(
        "class _Stored:\n"
        "    def supports(self, feature): return True\n"
        "    async def complete(self, request, context): ...\n"
    )
    assert check_layout.stray_backends({"evalkit.run.rescore": probe}) == [
        "evalkit.run.rescore: class _Stored is a backend outside evalkit/backends"
    ]


def _architecture(text: str) -> list[str]:
    known = check_layout.modules()
    graph = {m: check_layout.imports(p, known) for m, p in known.items()}
    return check_layout.architecture_problems(known, graph, text)


def test_the_architecture_table_is_checked_against_the_code() -> None:
    """A module left out, rows out of the layers' order, an import drawn that is not there (the table,
    then in the README, drew stats/, report/ and gate/ as three independent readers; the gate
    imported the report). The table is docs/architecture.md's."""
    readme = check_layout.ARCHITECTURE.read_text(encoding="utf-8")
    assert _architecture(readme) == []
    assert _architecture(readme.replace("`rates.py` (x of n", "rates (x of n")) == [
        "architecture table: evalkit.stats.rates is not named in the row of stats/"
    ]
    rows = [line for line in readme.splitlines() if line.startswith("| `evalkit/stats/`")]
    swapped = readme.replace(rows[0] + "\n", "").replace("| `evalkit/cli/`", rows[0] + "\n| `evalkit/cli/`")
    assert "architecture table: the rows are not in the order of LAYERS" in _architecture(swapped)
    drawn = readme.replace("| `_model.py`, `_yaml.py`, `errors.py`, `stats/`, `results/`, `backends/`", "| `report/`")
    assert any(line.startswith("architecture table: the row of gate/ imports") for line in _architecture(drawn))

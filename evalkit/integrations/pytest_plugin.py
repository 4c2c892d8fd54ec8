"""A pytest plug-in: `pytest --evalkit CONFIG [--evalkit-baseline FILE]` collects one test item per
scenario cell (backend/mode/strategy/scenario) of a run config, runs the config once, and judges each
cell: against a baseline with the regression gate (an item fails with the gate's reason, which
carries its interval), or alone (an item fails when the cell has no counted run). A cell whose every
run is `unsupported` is skipped: it cannot be measured on that backend. The fixture
`evalkit_run` gives tests the Python API: `evalkit_run("configs/x.yaml", runs=5)` returns `Results`.

Registered through the `pytest11` entry point, so it loads in every pytest session of an environment
with evalkit: it imports nothing heavy and does nothing until `--evalkit` is given.

Its inputs are checked before anything runs, as `evalkit run` and `evalkit gate` check them: the
config and its scenarios, the baseline files, the output path. A problem is one line (pytest's usage
error, exit 4), never a run of the whole config followed by a failure of every cell. A results file
it makes in a temporary folder is removed with the folder when the session ends.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from evalkit.gate.outcome import GateResult
    from evalkit.results.runs import Results, RunRow
    from evalkit.run.config import RunConfig
    from evalkit.scenario.model import Scenario

__all__ = ["EvalkitCell", "EvalkitSession", "evalkit_run"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalkit", "evalkit: one test per scenario cell of a run config")
    group.addoption("--evalkit", metavar="CONFIG", help="run this evalkit config; one test item per scenario cell")
    group.addoption(
        "--evalkit-baseline",
        metavar="FILE",
        action="append",
        help="baseline results file(s): each cell is gated against them (repeatable, shards merge)",
    )
    group.addoption(
        "--evalkit-out",
        metavar="FILE",
        help="results file of the run (resumed when it exists; default: a new file in a temporary folder)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from evalkit.errors import EvalkitError

    source = config.getoption("evalkit", None)
    if not source:
        return
    out = config.getoption("evalkit_out")
    try:
        config.stash[_SESSION] = EvalkitSession.checked(
            Path(source), [Path(p) for p in config.getoption("evalkit_baseline") or []], Path(out) if out else None
        )
    except EvalkitError as exc:  # one line, before anything runs (no YAML parser frames)
        raise pytest.UsageError(f"evalkit: {exc}") from None
    if config.args_source != pytest.Config.ArgsSource.ARGS:  # no paths given: collect the config alone
        config.args = [source]


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is not None:
        session.clean_up()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    session = parent.config.stash.get(_SESSION, None)
    if session is not None and file_path.resolve() == session.source.resolve():
        return EvalkitConfigFile.from_parent(parent, path=file_path)
    return None


@dataclass
class EvalkitSession:
    """The run (made once, on the first item) and its verdicts, shared by every cell's item."""

    source: Path
    run_config: RunConfig
    scenarios: list[Scenario]
    baseline: Results[RunRow] | None
    out: Path | None
    _results: Results[RunRow] | None = None
    _gate: GateResult | None = None
    _done: bool = field(default=False)
    _temporary: Path | None = None

    @classmethod
    def checked(cls, source: Path, baseline: list[Path], out: Path | None) -> EvalkitSession:
        """The session of `--evalkit SOURCE`, its inputs checked as `run` and `gate` check theirs."""
        from evalkit.results.integrity import load_checked
        from evalkit.run.config import load_config
        from evalkit.run.preflight import check_output_path, preflight

        config = load_config(source)
        scenarios = preflight(config)
        if out is not None:
            check_output_path(out)
        return cls(source, config, scenarios, load_checked(baseline, transcripts=0) if baseline else None, out)

    def config(self) -> RunConfig:
        return self.run_config

    def ensure_run(self) -> None:
        if self._done:
            return
        from evalkit.results.integrity import load_checked
        from evalkit.run.runner import run_config

        out = self.out
        if out is None:
            self._temporary = Path(tempfile.mkdtemp(prefix="evalkit-"))
            out = self._temporary / f"{self.run_config.name}.jsonl"
        run_config(self.run_config, out, resume=out.exists())
        # rows without transcripts: the items read rates and verdicts only
        self._results = load_checked([out], transcripts=0)
        if self.baseline is not None:
            from evalkit.gate.comparison import compare

            self._gate = compare(self.baseline, self._results)
        self._done = True

    def clean_up(self) -> None:
        """Remove the temporary folder of a run with no --evalkit-out (its results are in the report)."""
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None

    def unsupported(self, cell: str) -> bool:
        """Every run of the cell is `unsupported` (a grammar with native tools, say): not measurable."""
        self.ensure_run()
        assert self._results is not None
        outcomes = {r.outcome for r in self._results.runs if _cell_name(r.cell) == cell}
        return outcomes == {"unsupported"}

    def judge(self, cell: str) -> str | None:
        """Why the cell fails, or None when it passes."""
        self.ensure_run()
        if self._gate is not None:
            skipped = dict(self._gate.skipped)
            if cell in skipped:
                return f"not judged: {skipped[cell]}"
            verdict = next((v for v in self._gate.cells if v.name == cell), None)
            if verdict is None:
                return "not judged: the gate has no verdict for this cell"
            return "; ".join(verdict.reasons) or None
        assert self._results is not None
        runs = [r for r in self._results.runs if _cell_name(r.cell) == cell]
        if not any(r.counted for r in runs):
            outcomes: list[str] = sorted({r.outcome for r in runs}) or ["no run"]
            return f"not judged: no counted run ({', '.join(outcomes)})"
        return None

    def rate(self, cell: str) -> str:
        from evalkit.stats.proportions import wilson

        assert self._results is not None
        counted = [r for r in self._results.runs if _cell_name(r.cell) == cell and r.counted]
        correct = sum(1 for r in counted if r.correct)
        if not counted:
            return "no counted run"
        interval = wilson(correct, len(counted))
        return (
            f"correct {correct}/{len(counted)} = {correct / len(counted):.0%} [{interval.low:.0%}–{interval.high:.0%}]"
        )


_SESSION = pytest.StashKey[EvalkitSession]()


def _cell_name(cell: Any) -> str:
    return f"{cell.backend}/{cell.mode}/{cell.strategy}/{cell.scenario}"


class EvalkitConfigFile(pytest.File):
    """A run config: one item per scenario cell of its plan."""

    def collect(self) -> Iterator[pytest.Item]:
        session = self.config.stash[_SESSION]
        config = session.config()
        for entry in config.backends:
            modes, strategies = config.cells_of(entry)
            for mode in modes:
                for strategy in strategies:
                    for scenario in session.scenarios:
                        name = f"{entry.label}/{mode}/{strategy}/{scenario.id}"
                        yield EvalkitCell.from_parent(self, name=name)


class EvalkitCell(pytest.Item):
    """One scenario cell: passes unless the gate (or, without a baseline, the lack of counted runs) fails it."""

    def runtest(self) -> None:
        session = self.config.stash[_SESSION]
        if session.unsupported(self.name):
            pytest.skip("unsupported: the backend cannot do what this cell needs (no counted run)")
        reason = session.judge(self.name)
        self.user_properties.append(("evalkit", session.rate(self.name)))
        if reason is not None:
            raise EvalkitCellFailed(f"{self.name}: {reason} ({session.rate(self.name)})")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, EvalkitCellFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"evalkit cell {self.name}"


class EvalkitCellFailed(AssertionError):
    """A cell the gate failed, or one with no counted run."""


@pytest.fixture
def evalkit_run(tmp_path: Path) -> Callable[..., Results[RunRow]]:
    """Run a config (a path or a `RunConfig`) into a fresh results file; `runs=N` overrides its N.
    Its runs are rows without transcripts (`RunRow`); `load_results(results.paths)` reads them whole."""
    from evalkit.results.integrity import load_checked
    from evalkit.run.config import RunConfig, load_config
    from evalkit.run.runner import run_config

    def run(config: str | Path | RunConfig, *, runs: int | None = None) -> Results[RunRow]:
        loaded = config if isinstance(config, RunConfig) else load_config(config)
        if runs is not None:
            loaded = loaded.with_runs(runs)
        out = run_config(loaded, tmp_path / f"{loaded.name}.jsonl")
        return load_checked([out], transcripts=0)

    return run

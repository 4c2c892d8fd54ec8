"""Regenerate every committed artefact from the committed results, or check that none has drifted.

The artefacts: the reports under reports/ (HTML pages, the upgrade gates' markdown, the fitted
profile's calibration page), the fitted simulated profiles (evalkit/profiles/fitted/), and the generated
blocks (scripts/readme_findings.py) and sim figures (scripts/sim_figures.py) of the documentation's
pages (the README and docs/*.md: scripts/doc_pages.py). Each is made by the command the pages give
for it, run here in one process, in order: the fitted profiles first (the calibration page and the
sim figures read them). tests/test_regenerate.py runs `--check`.

A report's stamp is when its runs finished, not the clock, so the comparison is exact: byte for byte.

    python scripts/regenerate.py          # rewrite what is stale, name it
    python scripts/regenerate.py --check  # exit 1 and name what is stale; writes nothing
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

OUT = "{out}"  # where a command's output file goes


@dataclass(frozen=True)
class Artefact:
    """A committed file and what makes it: an evalkit command (`{out}` for its output file, the exit
    codes it may end with) or a function giving its text."""

    path: str
    command: tuple[str, ...] = ()
    exits: tuple[int, ...] = (0,)
    make: Callable[[], str] | None = None


def _fitted() -> list[Artefact]:
    import fit_profiles

    def text_of(model: str) -> Callable[[], str]:
        return lambda: fit_profiles.fitted_text(model)

    return [Artefact(str(fit_profiles.path_of(m).relative_to(ROOT)), make=text_of(m)) for m in fit_profiles.MODELS]


def _report(name: str, *args: str) -> Artefact:
    return Artefact(f"reports/{name}", ("report", *args, "-o", OUT))


def _gate(name: str, baseline: str, candidate: str, *, refused: bool = False) -> Artefact:
    """`refused`: the committed finding is the gate refusing its input (exit 2: a column over
    max_infra_error_rate); its markdown says so, and --check still compares it word for word."""
    from readme_findings import FORGE_GATE_OPTIONS

    command = ("gate", "--baseline", baseline, "--candidate", candidate, *FORGE_GATE_OPTIONS, "--markdown", OUT)
    return Artefact(f"reports/{name}", command, exits=(0, 1, 2, 4) if refused else (0, 1, 4))


def _page(path: Path) -> str:
    """The page with its generated blocks and its sim figures (where it holds them) made anew."""
    import readme_findings
    import sim_figures

    text, _ = readme_findings.regenerate_page(path.read_text(encoding="utf-8"))
    match = sim_figures._BLOCK.search(text)
    if match is None:
        return text
    return text[: match.start(2)] + sim_figures.block() + text[match.end(2) :]


def pages() -> list[Artefact]:
    """The documentation's pages that hold generated blocks or sim figures (a page without them is
    no artefact); tests/report/test_readme_findings.py holds every known block to one of them."""
    from doc_pages import doc_pages, name_of
    from readme_findings import _BLOCK
    from sim_figures import _BLOCK as FIGURES

    held = [p for p in doc_pages() if _BLOCK.search(t := p.read_text(encoding="utf-8")) or FIGURES.search(t)]
    return [Artefact(name_of(p), make=lambda p=p: _page(p)) for p in held]


def artefacts() -> list[Artefact]:
    """Every committed artefact, in the order they are made (what one reads comes before it)."""
    from readme_findings import AGENT_GATE_SIM, BFCL_WIDE, COMPARE_BFCL, FORGE_GATE_SIM, FORGE_GATE_SMOLLM2

    return [
        *_fitted(),
        _report("adr013.html", "results/adr013.jsonl", "--published", "configs/adr013-published.yaml"),
        _report("bfcl-wide.html", *BFCL_WIDE),
        _report("compare-models.html", "results/compare-models.jsonl"),
        _report("compare-models-bfcl.html", *COMPARE_BFCL),
        _report("forge-sim.html", "results/forge-sim-0.10.0.jsonl"),
        _report("forge-smollm2.html", "results/forge-smollm2.jsonl"),
        _report("agents-sim.html", "results/agents-sim.jsonl"),
        _gate("forge-upgrade-gate-sim.md", *FORGE_GATE_SIM, refused=True),  # 0.7.3's 502s (README "Forge")
        _gate("forge-upgrade-gate-smollm2.md", *FORGE_GATE_SMOLLM2),
        _gate("agent-upgrade-gate-sim.md", *AGENT_GATE_SIM),
        Artefact(
            "reports/sim-check-smollm2.html",
            ("sim", "check", "fitted/smollm2", "results/compare-models.jsonl", "--report", OUT),
        ),
        *pages(),
    ]


@contextlib.contextmanager
def _in_root() -> Iterator[None]:
    before = os.getcwd()
    os.chdir(ROOT)  # the commands name files as the pages do, relative to the checkout
    try:
        yield
    finally:
        os.chdir(before)


def made(artefact: Artefact) -> str:
    """The text the artefact's command or function gives now."""
    if artefact.make is not None:
        return artefact.make()
    from evalkit.cli import main as evalkit

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / Path(artefact.path).name
        argv = [str(out) if a == OUT else a for a in artefact.command]
        logs = io.StringIO()
        with contextlib.redirect_stdout(logs), contextlib.redirect_stderr(logs):
            code = evalkit(argv)
        if code not in artefact.exits or not out.exists():
            raise SystemExit(f"{artefact.path}: `evalkit {' '.join(argv)}` exited {code}\n{logs.getvalue()[-2000:]}")
        return out.read_text(encoding="utf-8")


def regenerate(check: bool) -> list[str]:
    """The artefacts that differ from what their commands give now; rewritten unless `check`."""
    stale = []
    with _in_root():
        for artefact in artefacts():
            path = ROOT / artefact.path
            new = made(artefact)
            committed = path.read_text(encoding="utf-8") if path.exists() else None
            if committed == new:
                continue
            stale.append(artefact.path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(new, encoding="utf-8")
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when an artefact is stale")
    args = parser.parse_args()
    stale = regenerate(check=args.check)
    if args.check:
        if stale:
            print(f"stale: {', '.join(stale)} (run python scripts/regenerate.py)")
        return 1 if stale else 0
    print(f"rewrote {', '.join(stale)}" if stale else "every artefact is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate the documentation's findings from the committed results, or check that they still match.

The pages "Reproducing ADR-013", "Forge's own guards under test", "Compare models before deployment",
"Importing BFCL" and "Agents under test" (docs/*.md; any page of scripts/doc_pages.py may) hold
blocks between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`; each block is written here
from results files (a correct-rate table per family, the findings summary's sentences, a BFCL score
table per category, a config's side-by-side pairs, an upgrade gate's summary, the agents' correct
rates, served calls and runaway runs), never typed.
tests/report/test_readme_findings.py fails when the pages and the results disagree.

    python scripts/readme_findings.py          # rewrite the blocks in the pages that hold them
    python scripts/readme_findings.py --check  # exit 1 and name the stale blocks
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "scripts") not in sys.path:  # run as a file, or loaded by a test
    sys.path.insert(0, str(ROOT / "scripts"))

from doc_pages import doc_pages, name_of  # noqa: E402

_BLOCK = re.compile(r"(<!-- generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S)


def _data(*results: str):  # type: ignore[no-untyped-def]  # ReportData; imported late to keep --help fast
    from evalkit.report.data import build_report
    from evalkit.results.reader import load_results

    return build_report(load_results([ROOT / r for r in results]), include_power=False)


def matrix(*results: str) -> str:
    """Correct rate per family (columns) for every backend · mode · strategy (rows)."""
    from evalkit.report.markdown import cell_text
    from evalkit.results.escaping import markdown_cell

    data = _data(*results)
    families = [r for r in data.rows if r.kind == "family"]
    lines = [
        "| model (mode) | strategy | " + " | ".join(markdown_cell(r.family) for r in families) + " |",
        "|---|---|" + "---|" * len(families),
    ]
    for column in data.columns:
        sim = " [SIM]" if column.simulated else ""
        cells = [markdown_cell(cell_text(data.cell(row, column))) for row in families]
        lines.append(
            f"| {markdown_cell(column.model_label)}{sim} ({column.mode}) | {column.strategy} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


def findings(*results: str) -> str:
    """One bullet per model and family: the best stack by correct, its rivals and its cost."""
    from evalkit.results.escaping import markdown_cell

    return "".join(f"- {markdown_cell(f.sentence)}\n" for f in _data(*results).findings)


def bfcl_categories(*results: str) -> str:
    """Per BFCL category (rows), each column's accuracy by evalkit's checker and by BFCL's own on the
    same final outputs: the report's "BFCL score" table turned on its side. Needs `bfcl-eval`."""
    from evalkit.importers.bfcl.score import CheckerJudge, with_bfcl_score
    from evalkit.report.formats import bfcl_notes, bfcl_value
    from evalkit.results.escaping import markdown_cell
    from evalkit.results.reader import load_results

    loaded = load_results([ROOT / r for r in results])
    data = with_bfcl_score(_data(*results), loaded, CheckerJudge())
    score = data.bfcl_score
    assert score is not None, f"{results}: no imported BFCL case"
    heads = {c.label: f"{c.model_label} ({c.mode}) · {c.strategy}" for c in data.columns}
    lines = [
        "| BFCL category | "
        + " | ".join(f"{markdown_cell(heads[r.label])}: evalkit / BFCL" for r in score.rows)
        + " |",
        "|---|" + "---|" * len(score.rows),
    ]
    for i, category in enumerate(score.categories):
        cells = []
        for row in score.rows:
            entry = row.entries[i]
            notes = bfcl_notes(entry)
            text = f"{bfcl_value(entry, 'evalkit')} / {bfcl_value(entry, 'bfcl')}" if entry else "–"
            cells.append(markdown_cell(text + (f"; {notes}" if notes else "")))
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    lines += ["", *_file_states(*results)]
    return "\n".join(lines) + "\n"


def side_by_side(results: str) -> str:
    """The config's `side_by_side` pairs per family (the report's "Side by side" table), and the
    file's state (a partial one is labelled)."""
    from evalkit.report.markdown import side_by_side_table

    return "\n".join([*side_by_side_table(_data(results).side_by_side), "", *_file_states(results)]) + "\n"


def _file_states(*results: str) -> list[str]:
    from evalkit.results.reader import load_results

    lines = []
    for r in results:  # each file's state: a partial one is labelled, with what it holds
        file = load_results([ROOT / r])
        status = file.footers[-1].status if file.footers else "no footer"
        partial = "" if status == "complete" else " (partial: `evalkit run CONFIG --resume` finishes it)"
        lines.append(f"- `{r}`: {status}, {len(file.runs)} runs{partial}")
    return lines


def gate_summary(baseline: str, candidate: str, *options: str) -> str:
    """What `evalkit gate --baseline B --candidate C OPTIONS --markdown FILE` writes, up to its table of
    passed cells (which the committed report under reports/ keeps): the verdict, the cells it did not
    judge and why, and its power notes; with the command that made it."""
    import contextlib
    import io
    import tempfile

    from evalkit.cli import main as evalkit

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "gate.md"
        args = ["gate", "--baseline", str(ROOT / baseline), "--candidate", str(ROOT / candidate), *options]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = evalkit([*args, "--markdown", str(out)])
        summary = out.read_text(encoding="utf-8").split("<details>", 1)[0].rstrip()
    command = " ".join(["evalkit gate --baseline", baseline, "--candidate", candidate, *options])
    return f"`{command}` (exit {code}):\n\n{summary.replace('## ', '**', 1).replace(chr(10), '**' + chr(10), 1)}\n"


def agents(results: str) -> str:
    """Per column (each agent, and evalkit's own loop for reference) and family: correct over counted
    runs with its Wilson 95% interval, served model calls per run, and the runs ended as `runaway`
    with their served-call counts (the agent asked for a call past its budget)."""
    from evalkit.report.formats import interval, pct
    from evalkit.results.escaping import markdown_cell
    from evalkit.results.reader import load_results
    from evalkit.stats.rates import rate

    loaded = load_results([ROOT / results])
    described = loaded.headers[-1].agents
    cells: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
    for run in loaded.runs:
        cells.setdefault((run.cell.strategy, run.cell.family), []).append(run)
    lines = [
        "| column | family | correct [Wilson 95%] | served calls per run: mean (fewest–most) | runaway runs |",
        "|---|---|---|---|---|",
    ]
    for (column, family), runs in cells.items():
        about = described.get(column)
        if about:  # an agent: its name and version as the header records them, and Cline's mode
            who = f"{column} ({about['name']} {about['version']}{', ' + about['mode'] if 'mode' in about else ''})"
        else:
            who = f"{column} (evalkit's own loop)"
        counted = [r for r in runs if r.counted]
        correct = rate(sum(r.correct for r in counted), len(counted))
        text = f"{correct.x}/{correct.n} = {pct(correct.value)} {interval(correct)}" if correct else "no counted runs"
        infra = len(runs) - len(counted)
        served = [r.served.calls if r.served is not None else r.model_calls for r in runs]
        runaway = sorted(r.served.calls for r in runs if r.outcome == "runaway" and r.served is not None)
        counts = "" if not runaway else f"{runaway[0]}" if runaway[0] == runaway[-1] else f"{runaway[0]}–{runaway[-1]}"
        cells_text = [
            markdown_cell(who),
            markdown_cell(family),
            text + (f" +{infra} infra" if infra else ""),
            f"{sum(served) / len(served):.1f} ({min(served)}–{max(served)})",
            f"{len(runaway)} of {len(runs)}" + (f", at {counts} served calls" if runaway else ""),
        ]
        lines.append("| " + " | ".join(cells_text) + " |")
    return "\n".join([*lines, "", *_file_states(results)]) + "\n"


# the grammar stack ran as a second config (a results file keeps its config); runs pair across the two
COMPARE_BFCL = ("results/compare-models-bfcl.jsonl", "results/compare-models-bfcl-grammar.jsonl")
# likewise: configs/bfcl-wide.yaml (native, trust_text) and its grammar sibling (prompt)
BFCL_WIDE = ("results/bfcl-wide.jsonl", "results/bfcl-wide-grammar.jsonl")
# configs/forge-sim.yaml with forge-guardrails 0.7.3 (baseline) and 0.10.0 (candidate): docs/forge.md
FORGE_GATE_SIM = ("results/forge-sim-0.7.3.jsonl", "results/forge-sim-0.10.0.jsonl")
FORGE_GATE_SMOLLM2 = ("results/forge-smollm2-0.7.3.jsonl", "results/forge-smollm2-0.10.0.jsonl")
FORGE_GATE_OPTIONS = ("--level", "family", "--margin", "0.1")
# configs/agent-gate-sim.yaml with pydantic-ai 2.60.0 (baseline) and 2.68.0 (candidate): docs/agents-under-test.md
AGENT_GATE_SIM = ("results/agent-gate-sim-2.60.0.jsonl", "results/agent-gate-sim-2.68.0.jsonl")

BLOCKS: dict[str, Callable[[], str]] = {
    "adr013-matrix": lambda: matrix("results/adr013.jsonl"),
    "adr013-findings": lambda: findings("results/adr013.jsonl"),
    "compare-models-matrix": lambda: matrix("results/compare-models.jsonl"),
    "compare-models-findings": lambda: findings("results/compare-models.jsonl"),
    "compare-models-bfcl-matrix": lambda: matrix(*COMPARE_BFCL),
    "compare-models-bfcl-findings": lambda: findings(*COMPARE_BFCL),
    "bfcl-wide-categories": lambda: bfcl_categories(*BFCL_WIDE),
    "adr013-forge": lambda: side_by_side("results/adr013.jsonl"),
    "forge-sim-side-by-side": lambda: side_by_side("results/forge-sim-0.10.0.jsonl"),
    "forge-smollm2-side-by-side": lambda: side_by_side("results/forge-smollm2.jsonl"),
    "forge-upgrade-gate-sim": lambda: gate_summary(*FORGE_GATE_SIM, *FORGE_GATE_OPTIONS),
    "forge-upgrade-gate-smollm2": lambda: gate_summary(*FORGE_GATE_SMOLLM2, *FORGE_GATE_OPTIONS),
    "agents-sim": lambda: agents("results/agents-sim.jsonl"),
    "agent-upgrade-gate-sim": lambda: gate_summary(*AGENT_GATE_SIM, *FORGE_GATE_OPTIONS),
}


def _fill(text: str, changed: list[str], seen: set[str]) -> str:
    """`text` with every known block rewritten; the blocks that changed and those met are noted."""

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise SystemExit(f"unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        seen.add(name)
        body = BLOCKS[name]()
        if body != match["body"]:
            changed.append(name)
        return match.group(1) + body + match.group(4)

    return _BLOCK.sub(fill, text)


def regenerate_page(text: str) -> tuple[str, list[str]]:
    """One page with the blocks it holds rewritten, and the names of the blocks that changed."""
    changed: list[str] = []
    return _fill(text, changed, set()), changed


def regenerate_pages(texts: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Every page (name -> text) with its blocks rewritten, and the names of the blocks that changed;
    each known block must be in one of them."""
    changed: list[str] = []
    seen: set[str] = set()
    new = {name: _fill(text, changed, seen) for name, text in texts.items()}
    missing = set(BLOCKS) - seen
    if missing:
        raise SystemExit(f"{', '.join(texts)}: no generated block for {', '.join(sorted(missing))}")
    return new, changed


def regenerate(text: str) -> tuple[str, list[str]]:
    """One text that holds every block, rewritten, and the names of the blocks that changed."""
    new, changed = regenerate_pages({"text": text})
    return new["text"], changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a block is stale")
    args = parser.parse_args()
    texts = {name_of(p): p.read_text(encoding="utf-8") for p in doc_pages()}
    new, changed = regenerate_pages(texts)
    if args.check:
        if changed:
            print(f"stale generated blocks: {', '.join(changed)} (run scripts/readme_findings.py)")
        return 1 if changed else 0
    for name, text in new.items():
        if text != texts[name]:
            (ROOT / name).write_text(text, encoding="utf-8")
    print(f"rewrote {', '.join(changed) or 'nothing (up to date)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""docs/agents-under-test.md, "What it finds": generated from the committed results/agents-sim.jsonl
(configs/agents-sim.yaml) by scripts/readme_findings.py, never typed; Cline's yolo-mode greeting shows
as runaway runs with their served-call count (issue 37, item 6).

Reads committed files only: no agent is run.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from evalkit.results.reader import load_results
from evalkit.run.config import load_config

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results" / "agents-sim.jsonl"
BLOCK = re.compile(r"<!-- generated:agents-sim -->\n(.*?)<!-- /generated:agents-sim -->", re.S)


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_findings", ROOT / "scripts" / "readme_findings.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _block() -> str:
    found = BLOCK.search((ROOT / "docs" / "agents-under-test.md").read_text(encoding="utf-8"))
    assert found, "docs/agents-under-test.md has no generated:agents-sim block"
    return found.group(1)


def test_the_block_is_what_the_script_writes_from_the_committed_results() -> None:
    assert _block() == _script().BLOCKS["agents-sim"](), "the page is stale: run python scripts/readme_findings.py"


def test_every_agent_and_family_has_its_row() -> None:
    config = load_config(ROOT / "configs" / "agents-sim.yaml")
    runs = load_results([RESULTS]).runs
    cells = {(r.cell.strategy, r.cell.family) for r in runs}
    assert {s for s, _ in cells} == {*config.strategies, *config.agents}
    assert len({f for _, f in cells}) == 4  # ADR-013's four families
    rows = [line for line in _block().splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == len(cells)


def test_cline_yolo_s_greeting_shows_as_runaway_runs_with_their_served_call_count() -> None:
    budget = load_config(ROOT / "configs" / "agents-sim.yaml").agents["cline-yolo"].budget
    cell = ("cline-yolo", "casual_greeting")
    runs = [r for r in load_results([RESULTS]).runs if (r.cell.strategy, r.cell.family) == cell]
    runaway = [r for r in runs if r.outcome == "runaway"]
    assert runaway, "yolo mode's greeting loop is ended by evalkit's budget"
    assert {r.served.calls for r in runaway if r.served is not None} == {budget}
    row = next(line for line in _block().splitlines() if line.startswith("| cline-yolo") and "casual_greeting" in line)
    assert row.endswith(f"| {len(runaway)} of {len(runs)}, at {budget} served calls |"), row

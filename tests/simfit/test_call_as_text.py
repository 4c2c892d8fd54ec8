"""The fit tells a call written as text (what `rescue_parse` recovers) from prose, on SmolLM2's own replies."""

from __future__ import annotations

from pathlib import Path

from evalkit.results.reader import iter_records
from evalkit.results.records import RunRecord
from evalkit.scenario.model import load_scenario
from evalkit.simfit.classify import classify_files, tool_behaviour

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "results/compare-models-bfcl.jsonl"
RUN = "smollm2/prompt/trust_text/bfcl-simple-python-346/5"


def _reply(path: Path, run_id: str) -> str:
    run = next(r for r in iter_records(path) if isinstance(r, RunRecord) and r.run_id == run_id)
    completion = run.calls[0].completion
    assert completion is not None
    return completion.text


def test_smollm2s_fenced_call_is_a_call_as_text_only_when_it_is_the_intended_call() -> None:
    """SmolLM2 wrote this fenced `{"name": ..., "args": {...}}` in a committed run: the rescue parser
    reads it, but its game name misses the colon the check wants, so it stays prose; the same text
    with the intended arguments is the intended call written as text."""
    scenario = load_scenario(ROOT / "scenarios/bfcl/simple_python/bfcl-simple-python-346.yaml")
    target = scenario.skill().calls[0]
    offered = {t.name: t.spec() for t in scenario.tools}
    text = _reply(REAL, RUN)
    assert '"name": "get_collectables_in_season"' in text and '"game_name": "Animal Crossing New Horizons"' in text
    assert tool_behaviour(scenario, target, [], offered, text) == "text_instead_of_tool"
    right = text.replace("Animal Crossing New Horizons", str((target.arguments or {})["game_name"]))
    assert right != text
    assert tool_behaviour(scenario, target, [], offered, right) == "call_as_text"
    assert tool_behaviour(scenario, target, [], offered, "I would call get_collectables_in_season.") == (
        "text_instead_of_tool"
    )


def test_on_the_committed_smollm2_runs_no_native_reply_is_the_intended_call_written_as_text() -> None:
    """What the fitted profile's call_as_text rests on: in ADR-013's and the Forge comparison's native
    runs SmolLM2 answers the tool steps in prose (text it writes that the rescue parser reads is a
    `respond` or another call, never the intended one), so the fitted share is the prior's alone."""
    scenarios = [load_scenario(p) for p in sorted((ROOT / "scenarios").glob("*/*.yaml")) if "bfcl" not in p.parts]
    found = classify_files([ROOT / "results/adr013.jsonl", ROOT / "results/forge-smollm2.jsonl"], "smollm2", scenarios)
    native = [o for o in found.observations if o.mode == "native" and o.step == "tool"]
    assert len(native) > 500
    assert sum(o.behaviour == "text_instead_of_tool" for o in native) > 400
    assert not any(o.behaviour == "call_as_text" for o in native)

"""`tool_step.call_as_text`: the simulated model writes the right call as text in the reply, which
`rescue_parse` (and Forge's rescue) recover; a profile without the weight draws what it always drew."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from scipy import stats

from evalkit.backends.entry import BackendEntry
from evalkit.backends.sim import SimulatedBackend
from evalkit.backends.sim_profile import SimProfile, load_profile
from evalkit.chat import CallContext, ChatRequest, Completion, Message, Skill, ToolSpec
from evalkit.errors import ConfigError
from evalkit.prompt_mode import parse_strict_calls
from evalkit.results.reader import iter_records
from evalkit.results.records import RunRecord
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config
from evalkit.scenario.model import load_scenario
from evalkit.strategies.rescue_parse import rescue_calls
from tests.fakes import call

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "tests/data/backends/sim_draws_before_call_as_text.json"
TOOLS = [ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})]
SKILL = Skill(calls=[call("get_weather", city="Oslo")], reply="It is cold.")


def with_weight(weight: float, base: str = "small-local") -> SimProfile:
    profile = load_profile(base)
    return profile.model_copy(update={"tool_step": profile.tool_step.model_copy(update={"call_as_text": weight})})


def ask(profile: SimProfile, seed: int, *, mode: str = "native", tool_choice: str | None = None) -> Completion:
    backend = SimulatedBackend(entry=BackendEntry(label="s", kind="sim", model="x"), profile=profile)
    request = ChatRequest(
        messages=[Message(role="user", content="weather in Oslo?")],
        tools=TOOLS if mode == "native" else [],
        tool_choice=tool_choice,  # type: ignore[arg-type]
    )
    context = CallContext(run_id="r", seed=seed, call_index=0, mode=mode, offered_tools=TOOLS, skill=SKILL)  # type: ignore[arg-type]
    return asyncio.run(backend.complete(request, context))


def written(reply: Completion) -> bool:
    """A reply with no structured call whose text `rescue_parse` reads as the intended call."""
    found = rescue_calls(reply.text, {t.name: t for t in TOOLS}) if not reply.tool_calls else None
    return found is not None and [(c.name, c.arguments) for c in found[0]] == [("get_weather", {"city": "Oslo"})]


# --- the weight -------------------------------------------------------------------------------------


def test_at_a_native_tool_step_the_call_is_written_as_text_at_the_profiles_rate() -> None:
    profile = with_weight(0.25)  # small-local's other weights sum to 1: a share of 0.25 / 1.25 = 0.2
    p = 0.25 / sum(profile.tool_step.model_dump().values())
    n = 1000
    hits = sum(written(ask(profile, seed)) for seed in range(n))
    low, high = stats.binom.ppf([0.0005, 0.9995], n, p)  # seeded: the 99.9% band is the tolerance, not luck
    assert low <= hits <= high, (hits, p * n)


def test_the_written_call_is_fenced_json_that_the_prompt_parser_does_not_take_for_its_own() -> None:
    profile = with_weight(1000.0)
    for mode in ("native", "prompt"):
        reply = ask(profile, 3, mode=mode)
        assert reply.tool_calls == [] and reply.finish_reason == "stop"
        assert reply.text.startswith("```\n{") and json.loads(reply.text.strip("`\n")) == {
            "name": "get_weather",
            "args": {"city": "Oslo"},
        }
        assert written(reply) and rescue_calls(reply.text, {"get_weather": TOOLS[0]}) is not None
        assert parse_strict_calls(reply.text) == []  # prompt mode's own format it is not: trust_text fails it


def test_a_forced_call_is_never_written_as_text() -> None:
    profile = with_weight(1000.0)
    assert all(ask(profile, seed, tool_choice="required").tool_calls for seed in range(50))


def test_the_weight_is_validated_and_defaults_to_zero(tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / "evalkit/profiles/small-local.yaml").read_text())
    del doc["tool_step"]["call_as_text"]
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert load_profile(str(path)).tool_step.call_as_text == 0.0
    doc["tool_step"]["call_as_text"] = -0.1
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match=r"tool_step\.call_as_text"):
        load_profile(str(path))


# --- the same draws without it ----------------------------------------------------------------------


class _Recording(SimulatedBackend):
    """The simulated backend, keeping every completion it gave (a seam, not a patch)."""

    seen: list[Completion]

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        reply = await super().complete(request, context)
        self.seen.append(reply)
        return reply


_SCENARIOS = {
    s.id: s
    for s in map(
        load_scenario,
        [
            ROOT / "scenarios/sequential_reasoning/medication_chain.yaml",
            ROOT / "scenarios/adr013/relevance_decline.yaml",
            ROOT / "scenarios/data_gap_recovery/hr_profile.yaml",
            ROOT / "scenarios/casual_greeting/hi.yaml",
        ],
    )
}


def _replayed(profile: SimProfile, run: dict[str, Any]) -> list[list[Any]]:
    from evalkit.backends.base import RetryPolicy
    from evalkit.chat import Sampling
    from evalkit.run.config import parse_strategy_specs
    from evalkit.run.loop import run_loop
    from evalkit.strategies import build_stack

    scenario = _SCENARIOS[run["scenario"]]
    backend = _Recording(entry=BackendEntry(label="sim-small", kind="sim", model="small-local"), profile=profile)
    backend.seen = []
    asyncio.run(
        run_loop(
            scenario,
            build_stack(parse_strategy_specs(run["strategy"], [run["strategy"]])),
            backend,
            mode=run["mode"],
            sampling=Sampling.model_validate(run["sampling"]),
            run_id=run["run_id"],
            seed=run["seed"],
            policy=RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0),
        )
    )
    # in prompt mode a run record keeps the calls the loop parsed out of the text: the text is the draw
    native = run["mode"] == "native"
    return [
        [c.text, [[t.name, t.arguments, t.raw_arguments] for t in c.tool_calls] if native else None]
        for c in backend.seen
    ]


def test_with_the_weight_zero_every_run_draws_what_the_backend_drew_before_the_weight_existed() -> None:
    """Against the committed sim-small runs of results/adr013.jsonl as they were before this weight (its
    draw is the last of the tool-step weights, so a zero changes neither the total nor any bisection)."""
    before = json.loads(BEFORE.read_text())
    assert len(before["runs"]) == 120
    profile = with_weight(0.0)
    for run in before["runs"]:
        recorded = [[text, calls if run["mode"] == "native" else None] for text, calls in run["completions"]]
        assert _replayed(profile, run) == recorded, run["run_id"]


# --- rescue_parse on the simulated model ------------------------------------------------------------


def _decline_runs(tmp_path: Path, weight: float, runs: int = 150) -> dict[str, list[RunRecord]]:
    profile = with_weight(weight).model_dump(exclude_none=True)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(profile))
    config = RunConfig.model_validate(
        {
            "name": "rescue",
            "seed": 11,
            "runs": runs,
            "modes": ["native"],
            "scenarios": [str(ROOT / "scenarios/adr013/relevance_decline.yaml")],
            "backends": [{"label": "s", "kind": "sim", "model": str(tmp_path / "p.yaml")}],
            "strategies": {"trust_text": ["trust_text"], "rescue_parse": ["rescue_parse"]},
        }
    )
    out: dict[str, list[RunRecord]] = {"trust_text": [], "rescue_parse": []}
    for record in iter_records(run_config(config, tmp_path / "r.jsonl")):
        if isinstance(record, RunRecord):
            out[record.cell.strategy].append(record)
    return out


def test_rescue_parse_recovers_the_written_calls_and_beats_trust_text_by_exactly_them(tmp_path: Path) -> None:
    runs = _decline_runs(tmp_path, 0.25)
    trust, rescue = runs["trust_text"], runs["rescue_parse"]
    rescued = [r for r in rescue if any(i.strategy == "rescue_parse" for i in r.interventions)]
    # the first call of a run is a plain tool step: written as text with the profile's share, 0.2
    first = sum(any(i.strategy == "rescue_parse" and i.call_index == 0 for i in r.interventions) for r in rescue)
    low, high = stats.binom.ppf([0.0005, 0.9995], len(rescue), 0.2)
    assert low <= first <= high
    # paired seeds: a run differs only where a call was written as text; there trust_text ends on prose
    # and rescue_parse runs the call (decline is the scenario's terminal tool)
    by_index = {r.index: r for r in trust}
    assert all(r.correct and not by_index[r.index].correct for r in rescued)
    assert (
        sum(r.correct for r in rescue) == sum(r.correct for r in trust) + len(rescued) > sum(r.correct for r in trust)
    )


def test_without_the_weight_rescue_parse_never_intervenes(tmp_path: Path) -> None:
    runs = _decline_runs(tmp_path, 0.0, runs=60)
    assert not any(i.strategy == "rescue_parse" for r in runs["rescue_parse"] for i in r.interventions)
    assert [r.correct for r in runs["rescue_parse"]] == [r.correct for r in runs["trust_text"]]


def test_forges_own_rescue_reads_the_written_call_too() -> None:
    """Forge's `rescue_tool_call` (its proxy's and middleware's rescue), in the Forge venv."""
    import subprocess

    from tests.forge_env import forge_python

    python = forge_python()
    text = ask(with_weight(1000.0), 3).text
    program = (
        "import json, sys; from forge.prompts.templates import rescue_tool_call; "
        "print(json.dumps([[c.tool, c.args] for c in rescue_tool_call(sys.stdin.read(), ['get_weather'])]))"
    )
    done = subprocess.run([str(python), "-c", program], input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-500:]
    assert json.loads(done.stdout) == [["get_weather", {"city": "Oslo"}]]

"""The parts a fitted profile adds to the simulated backend: per-family overrides, measured
constrained behaviour, wrong answers, and the label its results carry."""

from __future__ import annotations

import asyncio
from typing import Any

from evalkit.backends.entry import BackendEntry
from evalkit.backends.sim import SimulatedBackend
from evalkit.backends.sim_profile import SimProfile, load_profile
from evalkit.chat import CallContext, ChatRequest, Completion, Constraint, Message, Skill, ToolSpec
from tests.fakes import call

TOOLS = [
    ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}),
    ToolSpec(name="respond", parameters={"type": "object", "properties": {"message": {"type": "string"}}}),
]
SKILL = Skill(calls=[call("get_weather", city="Oslo")], reply="It is cold.")
ALWAYS_RIGHT = {
    "tool_step": {
        "correct": 1,
        "text_instead_of_tool": 0,
        "malformed_call": 0,
        "hallucinated_tool": 0,
        "wrong_arguments": 0,
        "premature_answer": 0,
    },
    "reply_step": {"unneeded_tool_call": 0, "uses_respond": 0},
    "after_nudge": {"tool_step_correct": 1, "reply_step_tool_call": 0, "uses_respond": 0},
}


def backend(**extra: Any) -> SimulatedBackend:
    profile = SimProfile.model_validate({"name": "t", **ALWAYS_RIGHT, **extra})
    return SimulatedBackend(entry=BackendEntry(label="s", kind="sim", model="t"), profile=profile)


def ask(sim: SimulatedBackend, seed: int, *, family: str = "f", skill: Skill = SKILL, constraint=None) -> Completion:  # type: ignore[no-untyped-def]
    request = ChatRequest(messages=[Message(role="user", content="weather?")], tools=TOOLS, constraint=constraint)
    context = CallContext(run_id="r", seed=seed, call_index=0, family=family, offered_tools=TOOLS, skill=skill)
    return asyncio.run(sim.complete(request, context))


def test_an_override_applies_to_its_family_only() -> None:
    prose = {k: 0 for k in ALWAYS_RIGHT["tool_step"]} | {"text_instead_of_tool": 1}
    sim = backend(overrides=[{"family": "chatty", "tool_step": prose}])
    assert all(ask(sim, s, family="other").tool_calls for s in range(30))
    assert not any(ask(sim, s, family="chatty").tool_calls for s in range(30))


def test_measured_constrained_behaviour_replaces_the_derived_one() -> None:
    grammar = Constraint(kind="grammar", grammar="root ::= x")
    derived = backend()
    assert all(ask(derived, s, constraint=grammar).tool_calls[0].arguments == {"city": "Oslo"} for s in range(30))
    measured = backend(constrained={"tool_step_correct": 0, "tool_step_respond": 0, "reply_step_respond": 0})
    got = [ask(measured, s, constraint=grammar).tool_calls[0] for s in range(30)]
    assert all(c.name == "get_weather" and c.arguments != {"city": "Oslo"} for c in got)
    done = Skill(reply="It is cold.")  # a reply step: the measured model calls a real tool, not respond
    assert all(ask(measured, s, skill=done, constraint=grammar).tool_calls[0].name == "get_weather" for s in range(30))


def test_wrong_reply_replaces_the_intended_answer() -> None:
    done = Skill(reply="It is cold.")
    right = [ask(backend(), s, skill=done).text for s in range(20)]
    wrong_profile = {**ALWAYS_RIGHT["reply_step"], "wrong_reply": 1}
    wrong = [ask(backend(reply_step=wrong_profile), s, skill=done).text for s in range(20)]
    assert set(right) == {"It is cold."} and "It is cold." not in wrong


def test_a_shipped_profile_draws_as_before() -> None:
    """wrong_reply and constrained default to off, and draw no random number while off."""
    sim = SimulatedBackend(entry=BackendEntry(label="s", kind="sim", model="small-local"))
    profile = load_profile("small-local")
    assert profile.constrained is None and profile.reply_step.wrong_reply == 0
    assert profile.label() == "SIMULATED"
    assert asyncio.run(sim.describe())["label"] == "SIMULATED"


def test_a_fitted_profile_names_its_model_and_files() -> None:
    profile = load_profile("fitted/smollm2")
    assert profile.fitted is not None and profile.fitted.model == "smollm2"
    assert profile.label().startswith("SIMULATED (fitted to smollm2 from ")
    assert "compare-models.jsonl" in profile.label() and "/" not in profile.label()

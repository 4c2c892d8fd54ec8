"""The simulated backend: a seeded, stochastic stand-in for a small LLM, needing no server.

Per call it works out where the run stands from the conversation (how much of the scenario's
intended solution has been done), decides whether the right move is a tool call or a reply, and
samples a behaviour from its profile. It reacts to the request: a guard's nudge, an offered
`respond` tool, `tool_choice="required"` and a grammar or schema constraint all change what it may
do; `tool_choice="none"` and a named tool (over HTTP) are honoured after the draw. It knows the
scenario's intended solution (its "skill") and never sees the success check. Over HTTP it calls a
scenario's tool by the name the request offers it under (`CallContext.tool_names`: an MCP client's
`<server>__<tool>`), and counts a call of that name as a call of the tool.

Randomness comes from (run seed, call index) only, so every strategy meets the same draws at the
same point of a run: comparisons between strategies are paired, as with a real fixed seed.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.backends.base import UNSATISFIABLE, Feature
from evalkit.backends.settings import BackendSettings
from evalkit.backends.sim_profile import Behaviour, SimProfile, load_profile
from evalkit.chat import CallContext, ChatRequest, Completion, Message, Skill, ToolCall, ToolSpec, Usage
from evalkit.prompt_mode import parse_strict_calls

if TYPE_CHECKING:
    import httpx

__all__ = ["SimulatedBackend"]

RESPOND = "respond"
_STALL_TEXT = "Sure, I'll look into that for you and get back with the details."
_INVENTED = "Based on what I know, the answer is 42. Let me know if you need anything else."
# a loop of one line: `evalkit.judge.degenerate` flags it, so it fails every check that judges a reply
# (as the real wrong answers it stands for do: wrong facts, no question, degenerate output)
_WRONG_REPLY = "I am not sure.\n" * 4


def _calls_in(message: Message) -> list[ToolCall]:
    if message.tool_calls:
        return message.tool_calls
    return parse_strict_calls(message.content) if message.role == "assistant" else []


def _progress(messages: list[Message], skill: Skill, names: dict[str, str]) -> int:
    """How many of the intended calls have been made, in order, with the intended arguments (a call by
    the name a tool is offered under, `names`' value, is a call of that tool)."""
    scenario_name = {offered: own for own, offered in names.items()}
    done = 0
    for message in messages:
        for call in _calls_in(message):
            if (
                done < len(skill.calls)
                and scenario_name.get(call.name, call.name) == skill.calls[done].name
                and call.arguments == skill.calls[done].arguments
            ):
                done += 1
    return done


def _written_call(calls: list[ToolCall]) -> str:
    """The right call written in the reply's text: a fenced JSON object with `name` and `args`, the
    form SmolLM2 writes (docs/sim-fitting.md); both `rescue_parse` and Forge's
    rescue read it, and the prompt-mode parser does not (it is not the harness's own format)."""
    objects = [{"name": c.name, "args": c.arguments or {}} for c in calls]
    return "```\n" + json.dumps(objects[0] if len(objects) == 1 else objects, indent=2) + "\n```"


def _placeholder_args(tool: ToolSpec) -> dict[str, Any]:
    props = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    return {name: ("hello" if spec.get("type", "string") == "string" else 1) for name, spec in props.items()}


class _Situation:
    """What the simulated model can see in the request."""

    def __init__(self, request: ChatRequest, context: CallContext):
        self.offered = context.offered_tools
        self.names = {t.name for t in self.offered}
        self.respond = RESPOND in self.names
        self.nudged = bool(request.messages) and request.messages[-1].origin == "guard"
        self.forced = request.tool_choice == "required" or request.constraint is not None
        self.constrained = request.constraint is not None
        self.prompt_mode = context.mode == "prompt"
        self.progress = _progress(request.messages, context.skill, context.tool_names)
        self.skill = context.skill
        self.family = context.family
        self.tool_names = context.tool_names


class SimulatedBackend:
    """`kind: sim`; `model` names a profile in evalkit/profiles (or a path to a profile YAML).

    `profile` given in code (a fit's posterior draw, say) is used instead of loading `model`."""

    kind: ClassVar[str] = "sim"
    speaks_http: ClassVar[bool] = False
    key_env: ClassVar[str | None] = None
    simulated = True

    def __init__(
        self,
        *,
        entry: BackendSettings,
        client: httpx.AsyncClient | None = None,
        api_key: str | None = None,
        profile: SimProfile | None = None,
    ):
        self.model = entry.model
        self.profile: SimProfile = profile if profile is not None else load_profile(entry.model)

    def supports(self, feature: Feature) -> bool:
        return feature not in UNSATISFIABLE

    async def describe(self) -> dict[str, Any]:
        label = self.profile.label()
        return {"kind": "sim", "simulated": True, "label": label, "profile": self.profile.model_dump(exclude_none=True)}

    async def aclose(self) -> None:
        return None

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        rng = random.Random(f"{context.seed}:{context.call_index}")
        s = _Situation(request, context)
        now = self.profile.behaviour(context.mode, context.family)
        if s.progress < len(s.skill.calls):
            text, calls = self._tool_step(rng, s, now, s.skill.calls[s.progress])
        else:
            text, calls = self._reply_step(rng, s, now)
        calls = [c.model_copy(update={"name": context.tool_names.get(c.name, c.name)}) for c in calls]
        if s.prompt_mode and calls:
            text, calls = self._as_text(rng, s, calls), []
        # after the draw, so requests that use neither option meet exactly the draws they always did
        if calls and request.tool_choice == "none":
            text, calls = self._in_words(s, calls), []
        elif context.forced_tool is not None:
            calls = self._onto(s, context.forced_tool, calls)
        prompt_chars = sum(len(m.content) for m in request.messages)
        usage = Usage(prompt_tokens=prompt_chars // 4, completion_tokens=max(1, len(text) // 4) + 8 * len(calls))
        return Completion(text=text, tool_calls=calls, finish_reason="tool_calls" if calls else "stop", usage=usage)

    # -- behaviours --------------------------------------------------------------------------------

    def _tool_step(
        self, rng: random.Random, s: _Situation, now: Behaviour, target: ToolCall
    ) -> tuple[str, list[ToolCall]]:
        if s.constrained and self.profile.constrained is not None:
            return self._act(rng, s, self._constrained_tool(rng), target)
        weights = now.tool_step.model_dump()
        if s.nudged:  # a corrective message mostly works; the rest fails as usual
            rest = 1 - now.after_nudge.tool_step_correct
            others = sum(v for k, v in weights.items() if k != "correct") or 1
            weights = {
                k: (now.after_nudge.tool_step_correct if k == "correct" else v * rest / others)
                for k, v in weights.items()
            }
        if s.constrained:  # the grammar makes format errors and invented tools impossible
            weights["malformed_call"] = weights["hallucinated_tool"] = 0.0
        if s.forced:  # must emit a call: prose (and a call in prose) turns into some call, most often the right one
            weights["correct"] += (
                weights["text_instead_of_tool"] + weights["premature_answer"] + weights["call_as_text"]
            )
            weights["text_instead_of_tool"] = weights["premature_answer"] = weights["call_as_text"] = 0.0
        behaviour = rng.choices(list(weights), weights=list(weights.values()))[0]
        if s.respond and behaviour == "correct" and rng.random() < self.profile.respond_instead_of_tool:
            behaviour = "premature_answer"
        return self._act(rng, s, behaviour, target)

    def _constrained_tool(self, rng: random.Random) -> str:
        measured = self.profile.constrained
        assert measured is not None
        draw = rng.random()
        if draw < measured.tool_step_correct:
            return "correct"
        return (
            "premature_answer" if draw < measured.tool_step_correct + measured.tool_step_respond else "wrong_arguments"
        )

    def _act(self, rng: random.Random, s: _Situation, behaviour: str, target: ToolCall) -> tuple[str, list[ToolCall]]:
        call_id = f"sim_{rng.randrange(10**8)}"
        if behaviour == "correct" and s.skill.parallel:  # all remaining calls in one reply
            rest = s.skill.calls[s.progress :]
            return "", [t.model_copy(update={"id": f"{call_id}_{i}"}) for i, t in enumerate(rest)]
        if behaviour == "correct":
            return "", [target.model_copy(update={"id": call_id})]
        if behaviour == "malformed_call":
            raw = json.dumps(target.arguments)[:-1] + ',"'  # cut short, as a model that stops mid-object
            return "", [ToolCall(id=call_id, name=target.name, raw_arguments=raw, parse_error="invalid JSON")]
        if behaviour == "hallucinated_tool":
            return "", [
                ToolCall(id=call_id, name=target.name.replace("get_", "fetch_") + "_info", arguments=target.arguments)
            ]
        if behaviour == "wrong_arguments":
            wrong = {k: (f"{v}-x" if isinstance(v, str) else v) for k, v in (target.arguments or {}).items()}
            return "", [ToolCall(id=call_id, name=target.name, arguments=wrong or {"query": "?"})]
        if behaviour == "premature_answer":
            return self._say(s, _INVENTED, call_id)
        if behaviour == "call_as_text":
            made = s.skill.calls[s.progress :] if s.skill.parallel else [target]
            return _written_call([c.model_copy(update={"name": s.tool_names.get(c.name, c.name)}) for c in made]), []
        return _STALL_TEXT, []  # text_instead_of_tool

    def _reply_step(self, rng: random.Random, s: _Situation, now: Behaviour) -> tuple[str, list[ToolCall]]:
        reply = s.skill.reply or "Okay."
        wrong = now.after_nudge.wrong_reply if s.nudged else now.reply_step.wrong_reply
        if wrong and rng.random() < wrong:
            reply = _WRONG_REPLY
        call_id = f"sim_{rng.randrange(10**8)}"
        real_tools = [t for t in s.offered if t.name != RESPOND]
        if s.constrained and self.profile.constrained is not None:
            if s.respond and (not real_tools or rng.random() < self.profile.constrained.reply_step_respond):
                return "", [ToolCall(id=call_id, name=RESPOND, arguments={"message": reply})]
            if real_tools:
                tool = rng.choice(real_tools)
                return "", [ToolCall(id=call_id, name=tool.name, arguments=_placeholder_args(tool))]
            return reply, []
        nudge = now.after_nudge
        p_tool = nudge.reply_step_tool_call if s.nudged else now.reply_step.unneeded_tool_call
        p_respond = nudge.uses_respond if s.nudged else now.reply_step.uses_respond
        if s.respond and (s.forced or rng.random() < p_respond):
            return "", [ToolCall(id=call_id, name=RESPOND, arguments={"message": reply})]
        if real_tools and (s.forced or rng.random() < p_tool):
            tool = rng.choice(real_tools)
            return "", [ToolCall(id=call_id, name=tool.name, arguments=_placeholder_args(tool))]
        return reply, []

    def _say(self, s: _Situation, text: str, call_id: str) -> tuple[str, list[ToolCall]]:
        if s.respond:
            return "", [ToolCall(id=call_id, name=RESPOND, arguments={"message": text})]
        return text, []

    def _in_words(self, s: _Situation, calls: list[ToolCall]) -> str:
        """`tool_choice: none`: the call drawn becomes what the model would say instead. An answer
        through `respond` is said; a call at a tool step is the stall; one at a reply step, the reply."""
        if calls[0].name == RESPOND and isinstance(message := (calls[0].arguments or {}).get("message"), str):
            return message
        return _STALL_TEXT if s.progress < len(s.skill.calls) else s.skill.reply or "Okay."

    def _onto(self, s: _Situation, name: str, calls: list[ToolCall]) -> list[ToolCall]:
        """A named `tool_choice`: the drawn calls of that tool, else one call of it whose arguments the
        model fills in blindly (as a forced call at a reply step does)."""
        kept = [c for c in calls if c.name == name]
        tool = next((t for t in s.offered if t.name == name), ToolSpec(name=name))
        return kept or [
            ToolCall(id=calls[0].id if calls else "sim_forced", name=name, arguments=_placeholder_args(tool))
        ]

    def _as_text(self, rng: random.Random, s: _Situation, calls: list[ToolCall]) -> str:
        """Prompt mode: the model writes its call as JSON text, sometimes imperfectly."""
        call = calls[0]
        body = call.raw_arguments if call.arguments is None else json.dumps(call.arguments)
        text = f'{{"name": "{call.name}", "arguments": {body}}}'
        if not s.constrained and rng.random() < self.profile.prompt_mode_malformed:
            text = text[:-2]  # a dropped closing brace: the commonest format slip
        return text

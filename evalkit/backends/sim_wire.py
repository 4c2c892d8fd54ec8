"""What `evalkit serve sim` reads from a request: the conversation, the scenario, the call's context.

The simulated backend in process gets facts beside the request (`CallContext`: the run's seed, the
call's index, the scenario's intended solution; `Message.origin`: which message a guard wrote). Over
HTTP there is only the request, as for a real model, so this module works them out from it:

- **the scenario**: the one of the known scenarios whose first user message is the conversation's
  first user message and whose system prompt the conversation's system text contains (tool names
  break a tie). No match: a conversation with no intended solution, where every step is a reply.
- **a run's model URL** (`/run/<token>/v1`, evalkit/backends/run_url.py) reaches here as the headers
  `X-Evalkit-Scenario` (the scenario by id, whatever the system prompt), `X-Evalkit-Seed` and
  `X-Evalkit-Run` (the call context's run id).
- **the seed**: the request's `seed` (OpenAI's field, which evalkit sends and guard proxies pass
  on), else the `X-Evalkit-Seed` header, else a hash of the first user message; the call's index is
  the number of assistant messages in the conversation. In process the draw is `(seed, call index)`
  too, so a conversation evalkit sends directly gets the same draws as in process.
- **the offered names** of the scenario's tools (`offered_names`): an MCP client offers a server's
  tools under names of its own (Cline: `evalkit__get_patient`), and refuses a call by any other name.
  The simulated model calls, and reads its progress from, the offered name that names the tool.
- **a correction** (the in-process `origin == "guard"`): after the model's last assistant message,
  a user message the scenario did not write (not one of its user turns, and not a prompt-mode tool
  result `Result of TOOL: ...`), or a tool result flagged as an error (Anthropic's `is_error`, or a
  text that opens with a tag such as Forge's `[UnknownTool]` or `[ToolArgValidationError]`). A
  mocked tool's own error (`{"error": ...}`) is the tool's answer, not a correction. See
  docs/protocols.md, "The simulated model over HTTP".
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evalkit.backends._wire import tool_call
from evalkit.chat import (
    CallContext,
    ChatRequest,
    Constraint,
    Message,
    Sampling,
    Skill,
    ToolChoice,
    ToolMode,
    ToolSpec,
)
from evalkit.prompt_mode import render_tool_prompt

__all__ = ["KnownScenario", "ScenarioIndex", "SimCall", "anthropic_call", "corrected", "offered_names", "openai_call"]

_PROMPT_HEADER = render_tool_prompt([]).splitlines()[0]  # "You can call these tools:"
_SCHEMA_MARK = " Parameters (JSON schema): "  # between a prompt-mode tool line's description and its schema
_ERROR_TAG = re.compile(r"^\[[A-Za-z][A-Za-z0-9_]*\]")  # Forge's "[UnknownTool] ...", "[ToolArgValidationError] ..."
_ERROR_MARK = "\x00evalkit-error\x00"  # carried on an Anthropic is_error result until `corrected` reads it


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _Turn(Protocol):
    @property
    def user(self) -> str: ...


class KnownScenario(Protocol):
    """What the server reads of a scenario (`evalkit.scenario.model.Scenario` is one; the scenario
    layer sits above the backends, so it is named by its shape here)."""

    @property
    def id(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def turns(self) -> Sequence[_Turn]: ...
    @property
    def tools(self) -> Sequence[_Named]: ...

    def user_text(self, index: int) -> str: ...
    def tools_at(self, turn: int) -> Sequence[_Named]: ...
    def skill(self) -> Skill: ...


@dataclass(frozen=True)
class SimCall:
    """A request as the simulated backend takes it: the request and the call's context."""

    request: ChatRequest
    context: CallContext
    scenario: str | None  # the matched scenario's id


class ScenarioIndex:
    """The scenarios a server knows, found again from a conversation's opening."""

    def __init__(self, scenarios: Iterable[KnownScenario] = ()):
        self._by_opening: dict[str, list[KnownScenario]] = {}
        self._by_id: dict[str, KnownScenario] = {}
        for scenario in scenarios:
            self._by_opening.setdefault(scenario.user_text(0).strip(), []).append(scenario)
            self._by_id.setdefault(scenario.id, scenario)

    def __len__(self) -> int:
        return sum(len(found) for found in self._by_opening.values())

    def find(self, messages: list[Message], tool_names: set[str], named: str | None = None) -> KnownScenario | None:
        """The scenario `named` (a run's model URL names it: an agent's own system prompt would not match),
        else the one the conversation opens as."""
        if named is not None and named in self._by_id:
            return self._by_id[named]
        first = next((m.content.strip() for m in messages if m.role == "user"), None)
        system = "\n".join(m.content for m in messages if m.role == "system")
        found = [s for s in self._by_opening.get(first or "", []) if s.system in system]
        if len(found) > 1:  # the same opening under the same system text: later turns, then the tools decide
            most = max(_turns_seen(s, messages) for s in found)
            found = [s for s in found if _turns_seen(s, messages) == most]
            offered = tool_names - {"respond"}
            found = [s for s in found if offered == {t.name for t in s.tools_at(most - 1)}] or found
        return found[0] if found else None


def offered_names(tools: Iterable[str], offered: Iterable[str]) -> dict[str, str]:
    """The name each of the scenario's `tools` is offered under, where it is not its own: its own name
    when offered, else the one offered name `<server>__<tool>` (an MCP client's; two such: no guess)."""
    offered = list(offered)
    names: dict[str, str] = {}
    for tool in tools:
        if tool in offered:
            continue
        found = [name for name in offered if name.endswith(f"__{tool}") and len(name) > len(tool) + 2]
        if len(found) == 1:
            names[tool] = found[0]
    return names


def _turns_seen(scenario: KnownScenario, messages: list[Message]) -> int:
    """How many of `scenario`'s user turns the conversation holds, in their order."""
    texts = [m.content.strip() for m in messages if m.role == "user"]
    seen = 0
    for text in texts:
        if seen < len(scenario.turns) and text == scenario.turns[seen].user.strip():
            seen += 1
    return seen


def corrected(messages: list[Message], scenario: KnownScenario | None) -> bool:
    """Whether the conversation ends in a correction of the model's last reply (module docstring)."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    if last is None:
        return False
    turns = {t.user.strip() for t in scenario.turns} if scenario is not None else set()
    for message in messages[last + 1 :]:
        if message.role == "tool" and (message.content.startswith(_ERROR_MARK) or _ERROR_TAG.match(message.content)):
            return True
        if message.role == "user" and not _scenario_text(message.content, turns):
            return True
    return False


def _scenario_text(text: str, turns: set[str]) -> bool:
    return text.strip() in turns or text.startswith("Result of ")  # a prompt-mode tool result


def _text(content: Any) -> str:
    """Text of a message's content: a string, or the text of its content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _tool_spec(name: object, description: object, parameters: object) -> ToolSpec:
    params = parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}
    return ToolSpec(name=str(name or ""), description=str(description or ""), parameters=params)


def _prompt_tools(messages: list[Message]) -> list[ToolSpec]:
    """The tools a prompt-mode system prompt describes (as `evalkit.prompt_mode` writes them)."""
    system = "\n".join(m.content for m in messages if m.role == "system")
    if _PROMPT_HEADER not in system:
        return []
    tools = []
    for line in system.split(_PROMPT_HEADER, 1)[1].splitlines():
        if (found := prompt_tool_line(line)) is not None:
            name, description, text = found
            try:
                schema = json.loads(text)
            except (ValueError, RecursionError):
                schema = None
            tools.append(_tool_spec(name, description, schema))
    return tools


def prompt_tool_line(line: str) -> tuple[str, str, str] | None:
    """Name, description and schema text of a line `- NAME: DESCRIPTION Parameters (JSON schema): {...}`.

    Plain string scans, each character looked at a bounded number of times: the regex this replaces
    (`^- ([^:\\s]+): (.*?) Parameters \\(JSON schema\\): (\\{.*\\})$`) rescanned the rest of the line at every
    marker, so a 1 MB system text held the server for minutes. Same answers (tests/backends/test_sim_wire_parsing.py).
    """
    colon = line.find(": ", 2)
    if not line.startswith("- ") or not line.endswith("}") or colon <= 2:
        return None
    name = line[2:colon]
    if ":" in name or any(c.isspace() for c in name):
        return None
    # the description is the shortest text before a marker that a "{" follows (the regex's lazy `.*?`)
    start = colon + 2
    at = line.find(_SCHEMA_MARK, start)
    while at != -1 and not line.startswith("{", at + len(_SCHEMA_MARK)):
        at = line.find(_SCHEMA_MARK, at + 1)
    if at == -1:
        return None
    return name, line[start:at], line[at + len(_SCHEMA_MARK) :]


def _seed(body: dict[str, Any], headers: dict[str, str], messages: list[Message]) -> int:
    header = headers.get("x-evalkit-seed", "")
    if "x-evalkit-run" in headers and header.lstrip("-").isdigit():
        return int(header)  # a run's URL decides: an agent's own fixed seed would make every run one draw
    seed = body.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed
    if header.lstrip("-").isdigit():
        return int(header)
    first = next((m.content for m in messages if m.role == "user"), "")
    return int.from_bytes(hashlib.sha256(first.encode()).digest()[:4], "big")


def _sampling(body: dict[str, Any], seed: int) -> Sampling:
    temperature = body.get("temperature")
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    return Sampling(
        temperature=float(temperature) if isinstance(temperature, int | float) else 0.7,
        seed=seed,
        max_tokens=int(max_tokens) if isinstance(max_tokens, int) else 256,
    )


def _call(
    messages: list[Message],
    tools: list[ToolSpec],
    choice: ToolChoice | None,
    constraint: Constraint | None,
    seed: int,
    sampling: Sampling,
    index: ScenarioIndex,
    headers: dict[str, str],
) -> SimCall:
    mode: ToolMode = "native"
    offered = tools
    if not tools and (prompt_tools := _prompt_tools(messages)):
        mode, offered = "prompt", prompt_tools
    scenario = index.find(messages, {t.name for t in offered}, headers.get("x-evalkit-scenario"))
    if corrected(messages, scenario):
        messages = [*messages[:-1], messages[-1].model_copy(update={"origin": "guard"})]
    messages = [m.model_copy(update={"content": m.content.removeprefix(_ERROR_MARK)}) for m in messages]
    request = ChatRequest(messages=messages, tools=tools, tool_choice=choice, constraint=constraint, sampling=sampling)
    context = CallContext(
        run_id=headers.get("x-evalkit-run", "http"),
        seed=seed,
        call_index=sum(m.role == "assistant" for m in messages),
        mode=mode,
        family=scenario.family if scenario else "",
        offered_tools=offered,
        skill=scenario.skill() if scenario else Skill(),
        tool_names=offered_names((t.name for t in scenario.tools), (t.name for t in offered)) if scenario else {},
    )
    return SimCall(request, context, scenario.id if scenario else None)


# -- OpenAI's chat completions --------------------------------------------------------------------


def _openai_message(raw: dict[str, Any]) -> Message:
    role = raw.get("role")
    content = _text(raw.get("content"))
    if role == "assistant":
        calls = [
            tool_call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
            for c in raw.get("tool_calls") or []
            if isinstance(c, dict)
        ]
        return Message(role="assistant", content=content, tool_calls=calls, origin="model")
    if role == "tool":
        return Message(role="tool", content=content, tool_call_id=raw.get("tool_call_id"), name=raw.get("name"))
    return Message(role="system" if role in ("system", "developer") else "user", content=content)


_CHOICES: dict[str, ToolChoice] = {"auto": "auto", "required": "required", "none": "none", "any": "required"}


def _openai_choice(raw: object) -> ToolChoice | None:
    if isinstance(raw, dict):
        return "required"  # a named function: a call is forced
    return _CHOICES.get(raw) if isinstance(raw, str) else None


def _openai_constraint(body: dict[str, Any]) -> Constraint | None:
    if isinstance(body.get("grammar"), str):
        return Constraint(kind="grammar", grammar=body["grammar"])
    schema = body.get("json_schema")
    form = body.get("response_format")
    if isinstance(form, dict) and form.get("type") == "json_schema":
        schema = (form.get("json_schema") or {}).get("schema")
    return Constraint(kind="json_schema", json_schema=schema) if isinstance(schema, dict) else None


def openai_call(body: dict[str, Any], headers: dict[str, str], index: ScenarioIndex) -> SimCall:
    """A `/v1/chat/completions` body as the simulated backend's request and context."""
    messages = [_openai_message(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = [
        _tool_spec(f.get("name"), f.get("description"), f.get("parameters"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(f := t.get("function"), dict)
    ]
    seed = _seed(body, headers, messages)
    return _call(
        messages,
        tools,
        _openai_choice(body.get("tool_choice")),
        _openai_constraint(body),
        seed,
        _sampling(body, seed),
        index,
        headers,
    )


# -- Anthropic's Messages API ---------------------------------------------------------------------


def _anthropic_messages(raw: dict[str, Any]) -> list[Message]:
    """One Anthropic message as evalkit messages: its tool results each become a tool message."""
    role, content = raw.get("role"), raw.get("content")
    if isinstance(content, str):
        return [Message(role="assistant" if role == "assistant" else "user", content=content)]
    blocks = [b for b in content or [] if isinstance(b, dict)]
    if role == "assistant":
        calls = [tool_call(b.get("id"), b.get("name"), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
        return [Message(role="assistant", content=_text(blocks), tool_calls=calls, origin="model")]
    out = [
        Message(
            role="tool",
            content=(_ERROR_MARK if b.get("is_error") else "") + _text(b.get("content")),
            tool_call_id=str(b.get("tool_use_id") or ""),
        )
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    text = _text(blocks)
    return [*out, Message(role="user", content=text)] if text or not out else out


def anthropic_call(body: dict[str, Any], headers: dict[str, str], index: ScenarioIndex) -> SimCall:
    """A `/v1/messages` body as the simulated backend's request and context."""
    system = _text(body.get("system"))
    messages = [Message(role="system", content=system)] if system else []
    for raw in body.get("messages") or []:
        if isinstance(raw, dict):
            messages += _anthropic_messages(raw)
    tools = [
        _tool_spec(t.get("name"), t.get("description"), t.get("input_schema"))
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]
    kind = (body.get("tool_choice") or {}).get("type") if isinstance(body.get("tool_choice"), dict) else None
    choice: ToolChoice | None = {"auto": "auto", "any": "required", "tool": "required", "none": "none"}.get(str(kind))  # type: ignore[assignment]
    seed = _seed(body, headers, messages)
    return _call(messages, tools, choice, None, seed, _sampling(body, seed), index, headers)

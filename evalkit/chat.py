"""Normalised chat types shared by backends, strategies and the agent loop.

Every backend translates its wire format into these and back, so strategies and scoring never see
a provider's JSON. They are pydantic models because they are written verbatim into results files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from evalkit._model import StrictModel

__all__ = [
    "UNKNOWN_TOOL_NAME",
    "CallContext",
    "ChatRequest",
    "Completion",
    "Constraint",
    "ExecutedCall",
    "Message",
    "Sampling",
    "Skill",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "parse_arguments",
    "with_placeholders",
]

Role = Literal["system", "user", "assistant", "tool"]
ToolChoice = Literal["auto", "required", "none"]
ToolMode = Literal["native", "prompt"]


class ToolSpec(StrictModel):
    """A tool offered to the model: a name, a description and JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


UNKNOWN_TOOL_NAME = "(unparsed)"  # the name of a call whose tool could not be read from the output


class ToolCall(StrictModel):
    """A tool call as the model made it.

    Unparseable arguments are kept, never dropped: `arguments` is then None, `raw_arguments` holds
    what the model wrote and `parse_error` says why it did not parse.
    """

    id: str = ""
    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None
    parse_error: str | None = None

    @property
    def malformed(self) -> bool:
        return self.arguments is None

    @property
    def name_lost(self) -> bool:
        """The output was too broken to tell which tool was meant (llama-server's unparsed calls)."""
        return self.name == UNKNOWN_TOOL_NAME


# How deep a call's arguments may nest. A run record holds them a few levels down, and a results
# file is read by a parser that stops at 200 levels (`evalkit.results.reader.MAX_NESTING`): a call
# nested deeper is a malformed call (its text is kept), so every record the runner writes reads back.
MAX_ARGUMENT_NESTING = 100


def parse_arguments(raw: str | dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """Parse tool-call arguments that arrive as a JSON string or an object; return (args, error)."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        value: Any = raw
    else:
        try:
            value = json.loads(raw)
        # ValueError also covers an integer past Python's digit limit; RecursionError, nesting past the stack
        except (ValueError, TypeError, RecursionError) as exc:
            return None, f"invalid JSON: {type(exc).__name__ if isinstance(exc, RecursionError) else exc}"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {type(value).__name__}, not an object"
    if _deeper_than(value, MAX_ARGUMENT_NESTING):
        return None, f"arguments nested deeper than {MAX_ARGUMENT_NESTING} levels"
    return value, None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep (without recursion)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [v for item in level for v in (item.values() if isinstance(item, dict) else item)]
        level = [v for v in level if isinstance(v, dict | list)]
        if not level:
            return False
    return True


class Message(StrictModel):
    """One chat message. `origin` marks messages the harness wrote (a guard's nudge, a mocked result)."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    origin: Literal["scenario", "model", "guard", "mock", "harness"] = "scenario"


class Constraint(StrictModel):
    """Constrained decoding: a GBNF grammar or a JSON schema the output must match."""

    kind: Literal["grammar", "json_schema"]
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    # hybrid mode: a backend that refuses constraints gets the request without them
    optional: bool = False


class Sampling(StrictModel):
    """Sampling settings sent with every call (and recorded per run)."""

    temperature: float = 0.7
    seed: int | None = None
    max_tokens: int = 256


class ChatRequest(StrictModel):
    """What a backend is asked: the only input a backend may use to build its wire request."""

    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    constraint: Constraint | None = None
    sampling: Sampling = Field(default_factory=Sampling)


class Skill(StrictModel):
    """The scenario's intended solution, which a *simulated* model may know (never the check)."""

    calls: list[ToolCall] = Field(default_factory=list)
    reply: str = ""
    asks_user: bool = False
    parallel: bool = False  # the calls belong in one reply (a scenario with end_after_calls)


class CallContext(StrictModel):
    """Facts about the call that are not part of the wire request.

    Real backends ignore it. The simulated backend uses it to draw deterministic randomness per
    call and to know the scenario's intended solution, as a model "knows" how to do a task.
    """

    run_id: str
    seed: int
    call_index: int
    mode: ToolMode = "native"
    family: str = ""  # the scenario's family: a fitted simulated profile may behave per family
    offered_tools: list[ToolSpec] = Field(default_factory=list)
    skill: Skill = Field(default_factory=Skill)
    # a `tool_choice` naming one tool, read from a request over HTTP (`ChatRequest.tool_choice` holds no name)
    forced_tool: str | None = None
    # a scenario tool's name -> the name the request offers it under, where the two differ: an MCP
    # client names a server's tools its own way (Cline: `evalkit__get_patient`). Read over HTTP only.
    tool_names: dict[str, str] = Field(default_factory=dict)
    # an agent's call: texts of its requests that vary from run to run or day to day (the run's temporary
    # folders, the date) -> fixed placeholders, for what is recorded and how a replay matches
    placeholders: dict[str, str] = Field(default_factory=dict)


class Usage(StrictModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Completion(StrictModel):
    """A backend's normalised answer. A tool call happened iff `tool_calls` is non-empty."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str = "stop"
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    constraint_dropped: bool = False


@dataclass(frozen=True)
class ExecutedCall:
    """A tool call the harness executed against the mocks, with what the mock answered."""

    call: ToolCall
    result: Any
    error: str | None
    known_tool: bool
    mutating: bool
    turn: int = 0  # the user turn (0-based) during which the model made the call


def with_placeholders(value: Any, placeholders: Mapping[str, str]) -> Any:
    """`value` (JSON: str, list, dict) with every text of `placeholders` replaced by its placeholder,
    the longest text first (a folder before the folder that holds it)."""
    if isinstance(value, str):
        for text in sorted(placeholders, key=len, reverse=True):
            value = value.replace(text, placeholders[text])
        return value
    if isinstance(value, list):
        return [with_placeholders(v, placeholders) for v in value]
    if isinstance(value, dict):
        return {k: with_placeholders(v, placeholders) for k, v in value.items()}
    return value

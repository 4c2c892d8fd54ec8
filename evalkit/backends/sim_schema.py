"""The request bodies `evalkit serve sim` accepts, as pydantic models of the fields it reads.

A field of the wrong type (`messages: 5`, `tools: 5`, a property schema `5`, a seed past 64 bits) is
the client's mistake: `validate_openai` and `validate_anthropic` raise a `RequestError` (400) that
names the field, before `evalkit.backends.sim_wire` reads the body. The models check types only:
fields the server does not read are let through (`extra="allow"`), as the APIs grow new ones. Types
are strict (JSON's own: a string is not a number), as OpenAI's and Anthropic's servers refuse them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit._model import first_problem
from evalkit.backends.sim_limits import RequestError

__all__ = ["SEED_HEADER", "validate_anthropic", "validate_openai"]

SEED_HEADER = "X-Evalkit-Seed"
Seed = Annotated[int, Field(ge=-(1 << 63), lt=1 << 64)]  # OpenAI's seed is a 64-bit integer
Count = Annotated[int, Field(ge=0, lt=1 << 31)]
# the APIs' ranges (OpenAI 0 to 2, Anthropic 0 to 1); Python's JSON reader takes NaN and Infinity
OpenAITemperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
AnthropicTemperature = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Parameters(_Wire):
    """A tool's JSON schema: the server reads its properties, each a schema object."""

    properties: dict[str, dict[str, Any]] = {}


class _Sampling(_Wire):
    model: str | None = None
    temperature: OpenAITemperature | None = None
    max_tokens: Count | None = None
    stream: bool | None = None


# -- OpenAI's chat completions --------------------------------------------------------------------


class _Part(_Wire):
    type: str
    text: str | None = None


class _Function(_Wire):
    name: str
    description: str | None = None
    parameters: Parameters | None = None


class _Tool(_Wire):
    type: str = "function"
    function: _Function


class _CallFunction(_Wire):
    name: str | None = None
    arguments: str | None = None


class _Call(_Wire):
    id: str | None = None
    function: _CallFunction


class _Message(_Wire):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[_Part] | None = None
    tool_calls: list[_Call] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class _JsonSchema(_Wire):
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class _ResponseFormat(_Wire):
    type: str
    json_schema: _JsonSchema | None = None


class _NamedChoice(_Wire):
    type: str = "function"


class OpenAIRequest(_Sampling):
    messages: list[_Message]
    tools: list[_Tool] | None = None
    tool_choice: Literal["auto", "required", "none", "any"] | _NamedChoice | None = None
    seed: Seed | None = None
    max_completion_tokens: Count | None = None
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    response_format: _ResponseFormat | None = None


# -- Anthropic's Messages API ---------------------------------------------------------------------


class _Block(_Wire):
    type: str
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    content: str | list[_Block] | None = None
    is_error: bool | None = None


class _AnthropicMessage(_Wire):
    role: Literal["user", "assistant"]
    content: str | list[_Block]


class _AnthropicTool(_Wire):
    name: str
    description: str | None = None
    input_schema: Parameters | None = None


class _AnthropicChoice(_Wire):
    type: Literal["auto", "any", "tool", "none"]


class AnthropicRequest(_Sampling):
    temperature: AnthropicTemperature | None = None
    messages: list[_AnthropicMessage]
    system: str | list[_Block] | None = None
    tools: list[_AnthropicTool] | None = None
    tool_choice: _AnthropicChoice | None = None


def _seed_header(headers: dict[str, str]) -> None:
    header = headers.get(SEED_HEADER.lower())
    if header is None:
        return
    digits = header.removeprefix("-")
    # isdigit alone lets "²" through, and int() refuses past 4,300 digits: ASCII, and 64 bits
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 20 and -(1 << 63) <= int(header) < 1 << 64):
        raise RequestError(400, f"{SEED_HEADER} is not a 64-bit integer: {header[:40]!r}", param=SEED_HEADER)


def _validate(model: type[_Wire], body: object, headers: dict[str, str]) -> None:
    if not isinstance(body, dict):
        raise RequestError(400, "the body is not a JSON object")
    try:
        model.model_validate(body)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise RequestError(400, f"{problem.field}: {problem.message}", param=problem.field) from None
    _seed_header(headers)


def validate_openai(body: object, headers: dict[str, str]) -> None:
    """Refuse (`RequestError`, 400) a chat completions body whose fields have the wrong types."""
    _validate(OpenAIRequest, body, headers)


def validate_anthropic(body: object, headers: dict[str, str]) -> None:
    """Refuse (`RequestError`, 400) a Messages API body whose fields have the wrong types."""
    _validate(AnthropicRequest, body, headers)

"""The `Backend` protocol, what a backend class declares to be a `kind` a config can name
(`BackendKind`), the features a backend may lack, and the retry policy for faults."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from evalkit.chat import CallContext, ChatRequest, Completion
from evalkit.errors import BackendError

__all__ = [
    "KIND_DECLARATIONS",
    "UNSATISFIABLE",
    "Backend",
    "BackendKind",
    "Feature",
    "RetryPolicy",
    "call_with_retries",
]

Feature = Literal[
    "native_tools",
    "tool_choice_required",
    "tool_choice_any",
    "grammar",
    "json_schema",
    "grammar_with_tools",
    "tool_choice_in_prompt_mode",
]
# Features no backend has: a strategy requires one to mark its cells `unsupported` (a custom grammar
# beside native tools; tool_choice when prompt mode sends no tool API fields). supports() answers False.
UNSATISFIABLE: frozenset[Feature] = frozenset({"grammar_with_tools", "tool_choice_in_prompt_mode"})

T = TypeVar("T")


@runtime_checkable
class Backend(Protocol):
    """A model server. One async method does the work; the rest is description.

    `complete` raises `BackendError` (with `retryable` set for timeouts, 429 and 5xx) and never
    returns a fake answer for a failed call.
    """

    model: str

    @property
    def kind(self) -> str: ...  # read-only here: a class variable of most backends, set by the wrappers

    @property
    def simulated(self) -> bool: ...  # results labelled SIMULATED; final once describe() has run

    def supports(self, feature: Feature) -> bool: ...

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion: ...

    async def describe(self) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class BackendKind(Protocol):
    """A backend class that a config names by its `kind`. The class declares, and the registry
    (`evalkit.backends.BACKENDS`) reads, everything that is known of a kind before one is built:

    - `kind`: the name a config's `kind:` gives;
    - `speaks_http`: it calls a server, so it is built with an `httpx.AsyncClient` and its `url`
      is checked before a run (a kind that does not is built with `client=None`);
    - `key_env`: the variable its API key is read from when the config names none (`None`: no key).

    It is built as `cls(entry=settings, client=client_or_None, api_key=key_or_None)`.
    """

    # read-only properties, so that the class variables of a class object match them
    @property
    def kind(self) -> str: ...

    @property
    def speaks_http(self) -> bool: ...

    @property
    def key_env(self) -> str | None: ...

    def __call__(self, *, entry: Any, client: Any, api_key: str | None = None) -> Backend: ...


KIND_DECLARATIONS = ("kind", "speaks_http", "key_env")  # BackendKind's class variables, checked by the registry


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with full jitter for retryable backend errors."""

    attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0, min(self.max_delay_s, self.base_delay_s * 2**attempt))


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> tuple[T, int]:
    """Run `call`, retrying retryable `BackendError`s; return (result, retries used).

    The last error propagates once the attempts are used up or when it is not retryable.
    """
    rng = rng or random.Random()
    for attempt in range(policy.attempts):
        try:
            return await call(), attempt
        except BackendError as exc:
            if not exc.retryable or attempt + 1 >= policy.attempts:
                raise
            await sleep(policy.delay(attempt, rng))
    raise AssertionError("unreachable")  # pragma: no cover

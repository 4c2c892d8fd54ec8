"""`forge`: Forge's own guardrails in process (forge.guardrails.Guardrails); needs Python >= 3.12 and forge-guardrails.

Every reply goes to `Guardrails.check`, and its action becomes evalkit's decision (docs/guards.md,
"Forge"):

- `execute` → `Execute` the calls (those Forge rescued from text are recorded as a rescue); with
  `respond_tool`, a lone `respond` call is the turn's answer (`Accept`), as Forge's proxy returns it;
- `retry` → `Retry` with Forge's nudge as a user message;
- `tool_error` → `Retry` on the tool-result channel: the rejected calls, each answered by the nudge;
- `step_blocked` → `Retry` with Forge's step nudge, in the role Forge gives it (user);
- `fatal` → `Stop("guard_fatal")`.

After each batch of calls ran, the ones that succeeded go to `Guardrails.record`. Forge's arguments
come from the scenario: the offered tools, its terminal tool and the tools its check requires (before
the terminal tool). Forge has no chat turn: a reply in text is always a bad response, so a turn that
must end in text (a greeting) ends `guard_fatal` unless `respond_tool` offers Forge's `respond` tool,
which is then a terminal tool too. A request without tools is not judged (the proxy passes it through).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.chat import ChatRequest, Completion, ExecutedCall, ToolCall, ToolSpec
from evalkit.errors import NotInstalled
from evalkit.strategies.base import Accept, BaseStrategy, Decision, Execute, Retry, Stop, TurnView

if TYPE_CHECKING:
    from forge.guardrails import Guardrails

__all__ = ["ForgeGuardrails", "forge_unavailable"]

RESPOND = "respond"  # forge.tools.respond.RESPOND_TOOL_NAME


def forge_unavailable() -> str | None:
    """Why Forge's guardrails cannot run in this interpreter, or None when they can."""
    python = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 12):
        return (
            f"strategy 'forge' needs Python >= 3.12 with forge-guardrails installed; this is Python {python} "
            "(bash scripts/install-forge.sh makes one: .forge/0.10.0/bin/evalkit)"
        )
    if importlib.util.find_spec("forge") is None:
        return (
            f"strategy 'forge' needs the package forge-guardrails, not installed in this Python {python} "
            "(bash scripts/install-forge.sh makes a venv with it: .forge/0.10.0/bin/evalkit)"
        )
    return None


def _check_options(strategy: ForgeGuardrails) -> None:
    for name in ("max_retries", "max_tool_errors", "max_premature_attempts"):
        value = getattr(strategy, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"option {name} must be an integer >= 0, not {value!r}")
    for name in ("rescue_enabled", "respond_tool"):
        if not isinstance(getattr(strategy, name), bool):
            raise ValueError(f"option {name} must be true or false, not {getattr(strategy, name)!r}")
    steps = strategy.required_steps
    if steps is not None and not (isinstance(steps, list) and all(isinstance(s, str) for s in steps)):
        raise ValueError(f"option required_steps must be a list of tool names, not {steps!r}")
    if strategy.retry_nudge is not None and not isinstance(strategy.retry_nudge, str):
        raise ValueError(f"option retry_nudge must be a string, not {strategy.retry_nudge!r}")


def _forge_response(reply: Completion) -> Any:
    """The reply as Forge's own clients hand it to its guardrails: text, or calls whose arguments that
    did not parse stay the raw value (from 0.7.4, `decode_tool_args`; the validator rejects them). Before
    0.7.4 its clients turned such a reply into text, and its ToolCall took only an object."""
    from forge.core.workflow import TextResponse
    from forge.core.workflow import ToolCall as ForgeCall

    if not reply.tool_calls:
        return TextResponse(content=reply.text)
    try:
        from forge.clients.base import decode_tool_args
    except ImportError:
        unreadable = next((c for c in reply.tool_calls if c.arguments is None), None)
        if unreadable is not None:
            return TextResponse(content=reply.text or unreadable.raw_arguments or "")
        return [ForgeCall(tool=c.name, args=c.arguments) for c in reply.tool_calls]
    return [ForgeCall(tool=c.name, args=_raw_args(c, decode_tool_args)) for c in reply.tool_calls]


def _raw_args(call: ToolCall, decode: Any) -> Any:
    if call.arguments is not None:
        return call.arguments
    return None if call.raw_arguments is None else decode(call.raw_arguments)  # None: nothing readable


@dataclass
class ForgeGuardrails(BaseStrategy):
    name: ClassVar[str] = "forge"
    # Forge's own options (forge.guardrails.Guardrails), with its defaults
    max_retries: int = 3
    max_tool_errors: int = 2
    rescue_enabled: bool = True
    max_premature_attempts: int = 3
    required_steps: list[str] | None = None  # None: the tools the scenario's check requires
    retry_nudge: str | None = None  # None: Forge's own text
    # offer Forge's `respond` tool (a terminal tool; a lone call is the answer): the proxy's
    # --inject-respond-tool
    respond_tool: bool = False

    def __post_init__(self) -> None:
        _check_options(self)
        missing = forge_unavailable()
        if missing:
            raise NotInstalled(missing)
        self._guardrails: Guardrails | None = None
        self._names: tuple[str, ...] = ()
        self._succeeded: list[str] = []  # replayed into a rebuilt Guardrails

    @staticmethod
    def provenance() -> dict[str, Any]:
        from evalkit.results.forge_wheel import installed_forge

        return installed_forge()

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest:
        if not self.respond_tool or not request.tools or any(t.name == RESPOND for t in request.tools):
            return request
        return request.model_copy(update={"tools": [*request.tools, _respond_spec()]})

    def guardrails(self, view: TurnView) -> Guardrails:
        """Forge's guardrails for the tools offered now; rebuilt (with what ran replayed) when a turn
        offers other tools, since Forge's tool names are fixed at construction."""
        from forge.guardrails import Guardrails

        names = tuple(t.name for t in (view.offered or view.tools))
        if self._guardrails is None or names != self._names:
            terminal = {view.terminal_tool} if view.terminal_tool else set()
            if RESPOND in names and self.respond_tool:
                terminal.add(RESPOND)
            steps = self.required_steps
            if steps is None:
                steps = list(dict.fromkeys(n for n in view.required_tools if n not in terminal))
            self._guardrails = Guardrails(
                tool_names=list(names),
                terminal_tool=frozenset(terminal),
                required_steps=steps,
                max_retries=self.max_retries,
                max_tool_errors=self.max_tool_errors,
                rescue_enabled=self.rescue_enabled,
                max_premature_attempts=self.max_premature_attempts,
                retry_nudge=None if self.retry_nudge is None else _fixed_nudge(self.retry_nudge),
            )
            self._names = names
            if self._succeeded:
                self._guardrails.record(list(self._succeeded))
        return self._guardrails

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        if not (view.offered or view.tools):
            return None
        response = _forge_response(reply)
        result = self.guardrails(view).check(response)
        if result.action == "fatal":
            return Stop("guard_fatal", f"forge fatal: {result.reason}")
        if result.action != "execute":
            assert result.nudge is not None  # set on retry, tool_error and step_blocked
            reason = f"forge {result.action} ({result.nudge.kind})"
            if result.nudge.role == "tool":
                return Retry(result.nudge.content, reason, role="tool")
            return Retry(result.nudge.content, reason)  # "user" (Forge's other roles are not in its guardrails)
        rescued = not isinstance(response, list)  # Forge read the calls out of text
        calls = (
            [ToolCall(name=c.tool, arguments=c.args) for c in result.tool_calls or []]
            if rescued
            else list(reply.tool_calls)
        )
        return self._execute(calls, rescued)

    def _execute(self, calls: list[ToolCall], rescued: bool) -> Decision:
        note = f"forge rescued {', '.join(c.name for c in calls)} from text" if rescued else None
        if not self.respond_tool:
            return Execute(calls, note=note, rescued=rescued)
        responds = [c for c in calls if c.name == RESPOND]
        others = [c for c in calls if c.name != RESPOND]
        if others:
            if responds:
                note = (note + "; " if note else "") + "dropped respond beside real calls"
            return Execute(others, note=note, rescued=rescued)
        message = (responds[0].arguments or {}).get("message", "")  # the proxy's reading of a lone respond
        self._record([RESPOND])
        return Accept(message if isinstance(message, str) else str(message), note=note)

    def after_execute(self, executed: list[ExecutedCall], view: TurnView) -> None:
        self._record([c.call.name for c in executed if _succeeded(c)])

    def _record(self, succeeded: list[str]) -> None:
        # names only: Guardrails reads arguments only for tool prerequisites, which it is never given,
        # and before 0.7.3 its record() took names alone
        self._succeeded += succeeded
        if self._guardrails is not None:
            self._guardrails.record(list(succeeded))


def _succeeded(done: ExecutedCall) -> bool:
    return done.known_tool and done.error is None and not done.call.malformed


def _respond_spec() -> ToolSpec:
    """Forge's own `respond` tool, as its proxy offers it."""
    from forge.clients.base import format_tool
    from forge.tools.respond import respond_spec

    function = format_tool(respond_spec())["function"]
    return ToolSpec(name=function["name"], description=function["description"], parameters=function["parameters"])


def _fixed_nudge(text: str) -> Callable[[str], str]:
    """Forge's `retry_nudge` hook (it is given the model's text): the configured text, whatever it was."""

    def nudge(_raw: str) -> str:
        return text

    return nudge

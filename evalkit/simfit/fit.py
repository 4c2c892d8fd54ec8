"""Fitting a simulated profile's parameters to classified model calls (`evalkit.simfit.classify`).

Every parameter is a share of calls in one situation, estimated with a Jeffreys prior: Beta(1/2, 1/2)
for a single share, Dirichlet(1/2, ..., 1/2) for the seven tool-step weights. The value is the
posterior mean, the interval the central 95% of the posterior (for a weight, of its Beta marginal),
so a parameter with no calls behind it is the prior's 0.5 with an interval of almost [0, 1].

Which calls inform which parameter (the simulated backend's own situations, `evalkit.backends.sim`):
`tool_step.*` the tool steps without a nudge, a constraint or a forced call (`call_as_text`: a reply
with no call that `rescue_parse` reads as the intended call); `after_nudge.
tool_step_correct` the tool steps just after a nudge (without a constraint); `reply_step.uses_respond`
the unforced reply steps without a nudge where `respond` was offered; `reply_step.unneeded_tool_call`
those same steps where the model did not use `respond` (the backend draws the two one after the
other); `after_nudge.reply_step_*` the same just after a nudge; `reply_step.wrong_reply` the
answers at a reply step (text or `respond`) that fail the check's reply items, `after_nudge.
wrong_reply` the same just after a nudge (repeated nudges push small models into loops).
Constrained calls (a grammar) inform only `constrained.*` (the tool steps' shares of the intended call and of `respond`,
a Dirichlet over three outcomes; the reply steps' share of `respond`), for the whole model: overrides
never carry them. `respond_instead_of_tool` is left at 0: an answer through `respond` at a tool step
is counted as `premature_answer`.

Where the tool-step behaviours, the reply-step behaviours or the share of wrong answers differ
between modes or between families more than chance allows (a chi-square test of homogeneity,
p < 0.01, over groups with 5 calls or more), the fit adds an override per group, fitted on that
group's calls alone, and says so in `fitted.notes`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
from scipy import stats as sps

from evalkit._model import StrictModel
from evalkit.backends.sim_profile import (
    AfterNudge,
    Constrained,
    Estimate,
    Fitted,
    Override,
    ReplyStep,
    SimProfile,
    Source,
    ToolStep,
)
from evalkit.simfit.classify import Observation, Recorded

__all__ = ["PRIOR", "TOOL_BEHAVIOURS", "fit_profile", "homogeneity_p"]

PRIOR = "Jeffreys: Beta(1/2, 1/2) per share, Dirichlet(1/2, ...) over the tool-step weights"
TOOL_BEHAVIOURS = list(ToolStep.model_fields)
_HALF = 0.5
_SPLIT_P = 0.01
_MIN_GROUP = 5

Keep = Callable[[Observation], bool]
_PARTS: list[tuple[str, type[StrictModel]]] = [
    ("tool_step", ToolStep),
    ("reply_step", ReplyStep),
    ("after_nudge", AfterNudge),
    ("constrained", Constrained),
]


def _estimate(k: int, n: int, categories: int = 2) -> Estimate:
    # the Beta marginal of a Dirichlet(½, …): this share's ½ against the other categories' ½ each
    a, b = k + _HALF, n - k + _HALF * (categories - 1)
    low, high = sps.beta.ppf([0.025, 0.975], a, b)
    return Estimate(value=round(a / (a + b), 6), low=round(float(low), 6), high=round(float(high), 6), calls=n, count=k)


def _share(obs: list[Observation], keep: Keep, hit: str) -> Estimate:
    chosen = [o for o in obs if keep(o)]
    return _estimate(sum(o.behaviour == hit for o in chosen), len(chosen))


def _plain_tool(o: Observation) -> bool:
    return o.step == "tool" and not (o.nudged or o.constrained or o.forced)


def _plain_reply(nudged: bool) -> Keep:
    return lambda o: o.step == "reply" and o.nudged == nudged and not o.forced


def _estimates(obs: list[Observation]) -> dict[str, Estimate]:
    tool = Counter(o.behaviour for o in obs if _plain_tool(o))
    n = sum(tool.values())
    found = {f"tool_step.{b}": _estimate(tool[b], n, len(TOOL_BEHAVIOURS)) for b in TOOL_BEHAVIOURS}
    found["after_nudge.tool_step_correct"] = _share(
        obs, lambda o: o.step == "tool" and o.nudged and not o.constrained, "correct"
    )
    for part, nudged in (("reply_step", False), ("after_nudge", True)):
        replies = [o for o in obs if _plain_reply(nudged)(o)]
        found[f"{part}.uses_respond"] = _share(replies, lambda o: o.respond, "respond")
        tool_name = "unneeded_tool_call" if part == "reply_step" else "reply_step_tool_call"
        found[f"{part}.{tool_name}"] = _share(replies, lambda o: o.behaviour != "respond", "unneeded_tool_call")
    for part, nudged in (("reply_step", False), ("after_nudge", True)):
        answers = [o for o in obs if _answer(o) and o.nudged == nudged]
        found[f"{part}.wrong_reply"] = _estimate(sum(o.wrong_reply for o in answers), len(answers))
    tools = Counter(o.behaviour for o in obs if o.step == "tool" and o.constrained)
    n = sum(tools.values())
    # three outcomes under a grammar: the intended call, `respond`, anything else
    found["constrained.tool_step_correct"] = _estimate(tools["correct"], n, 3)
    found["constrained.tool_step_respond"] = _estimate(tools["premature_answer"], n, 3)
    found["constrained.reply_step_respond"] = _share(
        obs, lambda o: o.step == "reply" and o.constrained and o.respond, "respond"
    )
    return found


def _parts(found: dict[str, Estimate], base: dict[str, Estimate] | None = None) -> dict[str, object]:
    """The profile's parts from estimates. For an override (`base` given) a part with no calls is
    left out, and a parameter with no calls takes the base value rather than the prior's."""
    parts: dict[str, object] = {}
    for name, model in _PARTS:
        mine = {k.split(".", 1)[1]: e for k, e in found.items() if k.startswith(f"{name}.")}
        # an override part without calls would only repeat the base: left out, so the base applies
        if base is not None and all(e.calls == 0 for e in mine.values()):
            continue
        values = {k: (base[f"{name}.{k}"].value if base and e.calls == 0 else e.value) for k, e in mine.items()}
        parts[name] = model(**values)
    return parts


def _answer(o: Observation) -> bool:
    return o.step == "reply" and o.behaviour in ("reply", "respond")


def homogeneity_p(
    obs: list[Observation], key: str, keep: Keep, outcome: Callable[[Observation], str] = lambda o: o.behaviour
) -> tuple[float, list[str]]:
    """The chi-square test's p-value that `keep`'s outcomes are the same in every group of `key`
    (groups with 5 calls or more), and those groups; p is 1.0 with fewer than two groups."""
    table: dict[str, Counter[str]] = {}
    for o in obs:
        if keep(o):
            table.setdefault(str(getattr(o, key)), Counter())[outcome(o)] += 1
    # small groups out: chi-square's approximation is poor below a handful of calls per row
    groups = sorted(g for g, c in table.items() if sum(c.values()) >= _MIN_GROUP)
    behaviours = sorted({b for g in groups for b in table[g]})
    if len(groups) < 2 or len(behaviours) < 2:
        return 1.0, groups
    counts = np.array([[table[g][b] for b in behaviours] for g in groups])
    return float(sps.chi2_contingency(counts)[1]), groups


def _overrides(obs: list[Observation], estimates: dict[str, Estimate], notes: list[str]) -> list[Override]:
    overrides: list[Override] = []
    for key in ("mode", "family"):
        tests = [
            homogeneity_p(obs, key, _plain_tool),
            homogeneity_p(obs, key, _plain_reply(False)),
            homogeneity_p(obs, key, _answer, lambda o: str(o.wrong_reply)),
        ]
        # any one of the three behaviours differing is reason enough to fit the groups apart
        p = min(t[0] for t in tests)
        groups = sorted({g for t in tests for g in t[1]})
        plural = {"mode": "modes", "family": "families"}[key]
        if len(groups) < 2:
            notes.append(f"one set of parameters for every {key}: fewer than two {plural} with {_MIN_GROUP} calls")
            continue
        if p >= _SPLIT_P:
            notes.append(f"one set of parameters for every {key}: no difference between {plural} (p = {p:.3g})")
            continue
        notes.append(f"per-{key} parameters: the {plural} behave differently (chi-square p = {p:.3g}; {groups})")
        for group in groups:
            mine = _estimates([o for o in obs if str(getattr(o, key)) == group])
            parts = _parts(mine, estimates)
            parts.pop("constrained", None)  # measured once, for the whole model
            estimates |= {f"{key}={group}.{k}": e for k, e in mine.items() if e.calls and k.split(".")[0] in parts}
            overrides.append(Override.model_validate({key: group, **parts}))
    return overrides


def fit_profile(found: Recorded, *, name: str | None = None) -> SimProfile:
    """A profile fitted to `found`'s calls, with its provenance, estimates and notes."""
    obs = found.observations
    estimates = _estimates(obs)
    notes = [
        "constrained calls (a grammar) inform only constrained.*, measured once for every family and mode",
        "respond_instead_of_tool is 0: an answer through respond at a tool step counts as premature_answer",
    ]
    if found.unknown:
        notes.append(f"{found.unknown} runs of scenarios not among those given were left out")
    if found.skipped:
        notes.append(f"{found.skipped} runs could not be replayed from their outputs and were left out")
    overrides = _overrides(obs, estimates, notes)
    files = ", ".join(s for s, _ in found.sources)
    fitted = Fitted(
        model=found.model,
        model_sha256=found.model_sha256,
        sources=[Source(file=f, sha256=h) for f, h in found.sources],
        prior=PRIOR,
        runs=found.runs,
        calls=len(obs),
        estimates=estimates,
        notes=notes,
    )
    return SimProfile.model_validate(
        {
            "name": name or f"fitted-{found.model}",
            "description": f"Fitted to {found.model}'s recorded calls in {files} "
            f"({len(obs)} calls, {found.runs} runs).",
            **_parts(estimates),
            "overrides": overrides,
            "fitted": fitted,
        }
    )

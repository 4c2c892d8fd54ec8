"""Importing Berkeley Function Calling Leaderboard (BFCL v4) cases as scenarios.

Reads the data files of the installed `bfcl-eval` package (no network). Function docs are turned
into JSON Schema the way BFCL does for function-calling models (`model_handler/utils.py`,
`convert_to_tool` with `GORILLA_TO_OPENAPI`): dotted names become underscored, `dict` is `object`,
`float` is `number` (with `format: float` and BFCL's description suffix), `tuple` is `array`, `any`
and unknown types are `string`. Possible answers become v2 checks in BFCL's terms (`types: strict`,
`strings: bfcl`, no extra arguments, exactly the expected calls, one reply). What cannot be said
exactly is either approximated and listed in the scenario's `provenance.approximations`, or the case
is skipped with the reason: nothing is dropped silently.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import re
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.importers.bfcl_multiturn import convert_multi_turn

__all__ = ["CATEGORIES", "Conversion", "ImportReport", "convert_case", "import_bfcl", "load_category", "tool_schema"]

CATEGORIES = {  # BFCL category -> evalkit family
    "simple_python": "tool_selection",
    "multiple": "tool_selection",
    "parallel": "tool_selection",
    "parallel_multiple": "tool_selection",
    "live_simple": "tool_selection",
    "live_multiple": "tool_selection",
    "live_parallel": "tool_selection",
    "live_parallel_multiple": "tool_selection",
    "irrelevance": "relevance_detection",
    "live_irrelevance": "relevance_detection",
    "live_relevance": "relevance_detection",
    "multi_turn_miss_param": "data_gap_recovery",
}
_GORILLA_TO_OPENAPI = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
}
_REFUSAL = "Sorry, none of the tools I have can do that."


class BfclMissing(EvalkitError):
    def __init__(self, detail: str) -> None:
        super().__init__(
            f"bfcl-eval is not usable ({detail}); install the optional extra: pip install 'evalkit[bfcl]' "
            "(or, without its heavy dependencies: pip install --no-deps 'bfcl-eval>=2026.3.23' filelock mpmath)"
        )


def _require_bfcl() -> None:
    """The optional package, before anything reads its data or metadata."""
    try:
        found = importlib.util.find_spec("bfcl_eval") is not None
        metadata.version("bfcl-eval")
    except (metadata.PackageNotFoundError, ImportError, ValueError):
        found = False
    if not found:
        raise BfclMissing("not installed")


@dataclass
class Conversion:
    scenario: dict[str, Any] | None
    approximations: list[str] = field(default_factory=list)
    skipped: str = ""


@dataclass
class ImportReport:
    written: list[str] = field(default_factory=list)
    approximated: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _data_dir() -> Any:
    try:
        return resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError as exc:
        raise BfclMissing("not installed") from exc


def attribution() -> tuple[str, str]:
    meta = metadata.metadata("bfcl-eval")
    version = metadata.version("bfcl-eval")
    emails = ", ".join(meta.get_all("Author-email") or [])
    authors = re.sub(r"\s*<[^>]*>", "", emails) or "Gorilla project, UC Berkeley"
    text = (
        f"Berkeley Function Calling Leaderboard (BFCL) v4 data from bfcl-eval {version} ({authors}); "
        "converted by evalkit"
    )
    return ", ".join(meta.get_all("License") or []) or "Apache 2.0", text


def load_category(category: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The category's cases, each with its possible answer (None for (ir)relevance categories)."""
    base = _data_dir()
    questions = (base / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
    answer_file = base / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {}
    if answer_file.is_file():
        for line in answer_file.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            answers[entry["id"]] = entry
    cases = [json.loads(line) for line in questions if line.strip()]
    return [(case, answers.get(case["id"])) for case in cases]


def tool_name(name: str) -> str:
    return re.sub(r"\.", "_", name)


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    # mirrors bfcl_eval.model_handler.utils._cast_to_openai_type (GORILLA_TO_OPENAPI)
    for value in properties.values():
        kind = value.get("type")
        if kind == "float":
            value["format"] = "float"
            value["description"] = value.get("description", "") + " This is a float type value."
        value["type"] = _GORILLA_TO_OPENAPI.get(kind, "string") if kind else "string"
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast(value["properties"])
            elif isinstance(value.get("items"), dict) and "type" in value["items"]:
                value["items"] = _cast({"_": value["items"]})["_"]
    return properties


def tool_schema(function: dict[str, Any]) -> dict[str, Any]:
    """One BFCL function doc as an evalkit tool (name, description, JSON Schema parameters)."""
    params = copy.deepcopy(function.get("parameters", {}))
    params["type"] = "object"
    params["properties"] = _cast(params.get("properties", {}))
    return {"name": tool_name(function["name"]), "description": function.get("description", ""), "parameters": params}


def _value_spec(value: Any) -> Any:
    """A BFCL acceptable value as an evalkit spec; dicts hold per-key alternatives (BFCL's dict_checker)."""
    if isinstance(value, dict):
        spec: dict[str, Any] = {}
        for key, alts in value.items():
            given = _alternatives([a for a in alts if a != ""])
            if given is _NOTHING:
                spec[key] = {"$optional": ""} if "" in alts else {"$absent": True}
            else:
                spec[key] = {"$optional": given} if "" in alts else given
        return spec
    if isinstance(value, list):
        return [_value_spec(v) for v in value]
    return value


_NOTHING = object()


def _alternatives(alts: list[Any]) -> Any:
    specs = [_value_spec(a) for a in alts]
    if not specs:
        return _NOTHING
    return specs[0] if len(specs) == 1 else {"$any_of": specs}


def _call_check(name: str, answer: dict[str, list[Any]], function: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    must = set(function.get("parameters", {}).get("required", []))
    arguments: dict[str, Any] = {}
    for param, alts in answer.items():
        spec = _alternatives([a for a in alts if a != ""])
        if spec is _NOTHING:
            arguments[param] = {"$absent": True}
            if param in must:
                notes.append(f"{name}.{param}: required by the function but must be absent in the answer")
        elif "" in alts and param not in must:
            arguments[param] = {"$optional": spec}
        else:
            arguments[param] = spec
    for param in sorted(must - set(answer)):
        notes.append(f"{name}.{param}: required by the function, not in the answer (BFCL fails any call)")
    return {"name": tool_name(name), "arguments": arguments, "extra_arguments": "forbid"}


def _prompt(case: dict[str, Any]) -> tuple[str, list[str]] | str:
    turns = case["question"]
    if len(turns) != 1:
        return f"{len(turns)} user turns"
    system = [m["content"] for m in turns[0] if m["role"] == "system"]
    users = [m["content"] for m in turns[0] if m["role"] == "user"]
    others = sorted({m["role"] for m in turns[0]} - {"system", "user"})
    if others or len(users) != 1:
        return f"a prompt of {len(users)} user message(s) and roles {others}"
    return "\n".join(system), users


def convert_case(category: str, case: dict[str, Any], answer: dict[str, Any] | None) -> Conversion:
    if category.startswith("multi_turn"):
        return _multi_turn(category, case, answer)
    prompt = _prompt(case)
    if isinstance(prompt, str):
        return Conversion(None, skipped=f"cannot say {prompt} as one scenario turn")
    system, turns = prompt
    functions = {f["name"]: f for f in case["function"]}
    notes: list[str] = []
    tools = [tool_schema(f) | {"results": [{"returns": {"status": "ok"}}]} for f in case["function"]]
    if "irrelevance" in category:
        check: dict[str, Any] = {"no_tool_calls": True}
        reference: dict[str, Any] = {"reply": _REFUSAL}
    elif category == "live_relevance":
        check = {"calls": {"any_of": [t["name"] for t in tools]}}
        reference = {"calls": [{"name": tools[0]["name"], "arguments": {}}]}
        notes.append("reference: the simulated model calls the first tool with no arguments")
    else:
        if answer is None:
            return Conversion(None, skipped="no possible answer")
        required = []
        for entry in answer["ground_truth"]:
            ((name, params),) = entry.items()
            if name not in functions:
                return Conversion(None, skipped=f"the answer calls {name!r}, which the case does not offer")
            required.append(_call_check(name, params, functions[name], notes))
        check = {
            "calls": {"order": "unordered", "required": required, "extra_calls": "forbid"},
            "match": {"normalise": "bfcl", "strict_types": True},
        }
        reference = {"calls": [{"name": r["name"], "arguments": _reference_args(r)} for r in required]}
    scenario: dict[str, Any] = {
        "schema_version": 2,
        "id": "bfcl-" + case["id"].replace("_", "-").lower(),
        "family": CATEGORIES[category],
        "description": f"BFCL v4 {category} case {case['id']}.",
    }
    if system:
        scenario["system"] = system
    scenario |= {
        "turns": turns,
        "tools": tools,
        "end_after_calls": True,
        "max_iterations": 3,
        "reference": reference,
        "check": check,
    }
    return Conversion(scenario, approximations=notes)


def _multi_turn(category: str, case: dict[str, Any], answer: dict[str, Any] | None) -> Conversion:
    fields, notes, skipped = convert_multi_turn(case, answer, _data_dir(), tool_schema)
    if fields is None:
        return Conversion(None, skipped=skipped)
    scenario = {
        "schema_version": 2,
        "id": "bfcl-" + case["id"].replace("_", "-").lower(),
        "family": CATEGORIES[category],
        "description": f"BFCL v4 {category} case {case['id']}.",
    } | fields
    return Conversion(scenario, approximations=notes)


def _reference_args(entry: dict[str, Any]) -> dict[str, Any]:
    """A literal call that passes the check: the first alternative, optional and absent keys left out."""

    def first(spec: Any) -> Any:
        if isinstance(spec, dict) and "$any_of" in spec:
            return first(spec["$any_of"][0])
        if isinstance(spec, dict):
            return {
                k: first(v)
                for k, v in spec.items()
                if not (isinstance(v, dict) and ("$optional" in v or "$absent" in v))
            }
        if isinstance(spec, list):
            return [first(v) for v in spec]
        return spec

    return first(entry["arguments"])  # type: ignore[no-any-return]


def import_bfcl(categories: list[str], sample: int | None, seed: int) -> tuple[list[dict[str, Any]], ImportReport]:
    """Converted scenarios (with provenance) for a seeded sample of each category, and what happened."""
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise EvalkitError(f"unknown BFCL categories {unknown} (known: {sorted(CATEGORIES)})")
    _require_bfcl()
    license_name, credit = attribution()
    report = ImportReport()
    out: list[dict[str, Any]] = []
    for category in categories:
        cases = load_category(category)
        if sample is not None and sample < len(cases):
            picked = sorted(random.Random(f"{seed}:{category}").sample(range(len(cases)), sample))
            cases = [cases[i] for i in picked]
        for case, answer in cases:
            conversion = convert_case(category, case, answer)
            if conversion.scenario is None:
                report.skipped.append((case["id"], conversion.skipped))
                continue
            conversion.scenario["provenance"] = {
                "dataset": "BFCL v4",
                "category": category,
                "id": case["id"],
                "license": license_name,
                "attribution": credit,
                "approximations": conversion.approximations,
            }
            report.approximated += [(case["id"], note) for note in conversion.approximations]
            out.append(conversion.scenario)
    return out, report

"""Hostile inputs for tests/cli/test_fuzz.py: valid files made once, and hypothesis strategies that
hand each example one of them as it is, mutated in its structure (a field of the wrong type, null, a
huge number, control characters, nesting 100,000 deep) or mutated as bytes (a line cut short,
invalid UTF-8, a line dropped, doubled or moved, a header contradicting its records)."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEEP = "[" * 100_000 + "]" * 100_000  # as JSON text; as YAML, "[" is a flow sequence too

WEIRD_TEXT = [
    "",
    " ",
    "\x1b[2J\x1b[H",
    "a\nb",
    "a\r\nPASS",
    "\x00",
    "\ud7ff\ue000\uffff",
    "\u202egnp",
    "../../../etc/passwd",
    "/",
    "$\\frac{1$",
    "<script>x</script>",
    "%s%n{0}",
    "x" * 5000,
    "null",
    "1e999",
    "- a\n- b",
    "*",
]
NUMBERS = [0, -1, 1, 2, 2**31, 2**63, -(2**63), 10**30, 0.5, -0.5, 1.5, 1e308, -1e308, 1e-320]
TEXT = st.sampled_from(WEIRD_TEXT) | st.text(max_size=12)
SCALAR = st.none() | st.booleans() | st.sampled_from(NUMBERS) | st.integers() | st.floats() | TEXT
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@dataclass(frozen=True)
class Bases:
    """Valid inputs, made once per test session, that the examples copy and mutate."""

    folder: Path
    config: dict[str, Any]  # a small simulated run config (its scenario globs absolute)
    baseline: str  # results of `config`
    candidate: str  # results of `config` with another seed
    real: str  # `baseline` as if a real model had made it (what `sim fit` fits)
    scenario: str  # a v1 scenario file's text
    bfcl_scenario: str  # a v2 (imported BFCL) scenario file's text
    gate_config: str
    profile: str  # a fitted simulated profile
    published: str
    bfcl_cases: str  # a few BFCL simple_python cases, as bfcl_eval/data holds them
    bfcl_answers: str


def make_bases(folder: Path) -> Bases:
    scenarios = folder / "scenarios"
    scenarios.mkdir()
    shutil.copy(ROOT / "scenarios/casual_greeting/hi.yaml", scenarios / "hi.yaml")
    config = {
        "name": "fuzz",
        "seed": 1,
        "runs": 2,
        "scenarios": [str(scenarios / "*.yaml")],
        "modes": ["native"],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local"}],
        "strategies": {"trust_text": ["trust_text"], "nudge": ["retry_nudge"]},
    }
    results = []
    for seed in (1, 2):
        (folder / "c.yaml").write_text(yaml.safe_dump(config | {"seed": seed}), encoding="utf-8")
        out = folder / f"r{seed}.jsonl"
        assert main(["run", str(folder / "c.yaml"), "-o", str(out), "--no-progress"]) == 0
        results.append(out.read_text(encoding="utf-8"))
    bfcl = next((ROOT / "scenarios/bfcl/simple_python").glob("*.yaml"))
    data = _bfcl_data()
    return Bases(
        folder=folder,
        config=config,
        baseline=results[0],
        candidate=results[1],
        real=results[0].replace('"simulated":true', '"simulated":false'),
        scenario=(scenarios / "hi.yaml").read_text(encoding="utf-8"),
        bfcl_scenario=bfcl.read_text(encoding="utf-8"),
        gate_config="alpha: 0.05\nlevel: scenario\nfloors:\n  - {floor: 0.1, scenario: '*'}\n",
        profile=(ROOT / "evalkit/profiles/fitted/smollm2.yaml").read_text(encoding="utf-8"),
        published=(ROOT / "configs/adr013-published.yaml").read_text(encoding="utf-8"),
        bfcl_cases=data[0],
        bfcl_answers=data[1],
    )


def _bfcl_data() -> tuple[str, str]:
    try:
        from evalkit.importers.bfcl.data import data_dir

        base = data_dir()
        name = "BFCL_v4_simple_python.json"
        cases = (base / name).read_text(encoding="utf-8").splitlines()[:3]
        answers = (base / "possible_answer" / name).read_text(encoding="utf-8").splitlines()[:3]
    except Exception:  # bfcl-eval not installed: hand-made cases of the same shape
        cases = [
            json.dumps({"id": "simple_python_0", "question": [[{"role": "user", "content": "hi"}]], "function": []})
        ]
        answers = [json.dumps({"id": "simple_python_0", "ground_truth": []})]
    return "\n".join(cases) + "\n", "\n".join(answers) + "\n"


# -- mutations ----------------------------------------------------------------------------------------


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths(value, (*at, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += _paths(value, (*at, i))
    return found


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return doc


def _delete(doc: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return None
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    return doc


_DEEP_MARK = "\u0000deep\u0000"  # replaced by DEEP in the serialised text


@st.composite
def mutated_doc(draw: st.DrawFn, doc: Any) -> Any:
    """`doc` with one to three structural mutations."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        how = draw(st.sampled_from(["value", "value", "delete", "deep", "null", "type"]))
        if how == "delete":
            doc = _delete(doc, path)
        elif how == "deep":
            doc = _set(doc, path, _DEEP_MARK)
        elif how == "null":
            doc = _set(doc, path, None)
        elif how == "type":
            doc = _set(doc, path, draw(st.sampled_from([[], {}, "", 0, True, [None], {"": None}])))
        else:
            doc = _set(doc, path, draw(VALUE))
    return doc


def _json(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False).replace(json.dumps(_DEEP_MARK), DEEP)


_DEEP_YAML = yaml.safe_dump({"k": _DEEP_MARK}).strip().removeprefix("k: ")  # how YAML writes the mark


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False).replace(_DEEP_YAML, DEEP)


@st.composite
def mutated_bytes(draw: st.DrawFn, text: str) -> bytes:
    """`text` as bytes, with lines dropped, doubled, moved or cut, or bytes inserted."""
    lines = text.encode("utf-8", errors="surrogatepass").splitlines(keepends=True) or [b""]
    how = draw(st.sampled_from(["cut", "cut line", "insert", "drop", "double", "move", "garbage line"]))
    i = draw(st.integers(0, len(lines) - 1))
    if how == "cut":
        whole = b"".join(lines)
        return whole[: draw(st.integers(0, len(whole)))]
    if how == "cut line":
        lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    elif how == "insert":
        at = draw(st.integers(0, len(lines[i])))
        junk = draw(st.sampled_from([b"\x00", b"\xff\xfe", b"\x1b[2J", b"\n", b"\r", b"\t", b"\xc3", b'"', b"{", b"]"]))
        lines[i] = lines[i][:at] + junk + lines[i][at:]
    elif how == "drop":
        del lines[i]
    elif how == "double":
        lines.insert(i, lines[i])
    elif how == "move":
        lines.append(lines.pop(i))
    else:
        lines[i] = draw(st.binary(max_size=40)) + b"\n"
    return b"".join(lines)


@st.composite
def results_file(draw: st.DrawFn, text: str) -> bytes:
    """A results file: as written, with one record mutated, its bytes mutated, or its header
    contradicting its records (another config, runs per cell, seed, shard, version)."""
    how = draw(st.sampled_from(["as written"] * 4 + ["record", "record", "bytes", "header"]))
    lines = text.splitlines()
    if how == "as written":
        return text.encode()
    if how == "bytes":
        return draw(mutated_bytes(text))
    if how == "header":
        header = json.loads(lines[0])
        field = draw(st.sampled_from(["config_hash", "runs_per_cell", "seed", "shard", "schema_version", "config"]))
        # runs_per_cell stays modest: what a header's huge claim costs `merge` is issue 30 item 5's (memory)
        header[field] = draw(
            {
                "config_hash": TEXT,
                "runs_per_cell": st.integers(-3, 1000),
                "seed": st.sampled_from(NUMBERS),
                "shard": st.sampled_from(["1/2", "2/2", "0/0", "3/2", "x", None]),
                "schema_version": st.sampled_from([0, 2, 99, -1]),
                "config": st.just({"name": "other", "modes": ["prompt"], "backends": [{"label": "z"}]}),
            }[field]
        )
        return "\n".join([json.dumps(header), *lines[1:]]).encode() + b"\n"
    i = draw(st.integers(0, len(lines) - 1))
    lines[i] = _json(draw(mutated_doc(json.loads(lines[i]))))
    return ("\n".join(lines) + "\n").encode("utf-8", errors="surrogatepass")


@st.composite
def yaml_file(draw: st.DrawFn, doc_or_text: Any) -> bytes:
    """A YAML file: as is, structurally mutated, or its bytes mutated."""
    doc = yaml.safe_load(doc_or_text) if isinstance(doc_or_text, str) else doc_or_text
    how = draw(st.sampled_from(["as is"] * 3 + ["structure", "structure", "bytes"]))
    if how == "as is":
        return _yaml(doc).encode()
    if how == "bytes":
        return draw(mutated_bytes(_yaml(doc)))
    return _yaml(draw(mutated_doc(doc))).encode("utf-8", errors="surrogatepass")


@st.composite
def jsonl_file(draw: st.DrawFn, text: str) -> bytes:
    """A JSON-lines data file (BFCL's): as is, one record mutated, or its bytes mutated."""
    lines = text.splitlines()
    how = draw(st.sampled_from(["as is", "as is", "record", "bytes"]))
    if how == "as is":
        return text.encode()
    if how == "bytes":
        return draw(mutated_bytes(text))
    i = draw(st.integers(0, len(lines) - 1))
    lines[i] = _json(draw(mutated_doc(json.loads(lines[i]))))
    return ("\n".join(lines) + "\n").encode("utf-8", errors="surrogatepass")

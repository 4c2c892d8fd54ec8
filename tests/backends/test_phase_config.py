"""`serve.phases` in a backend entry: what it accepts, what it refuses, and what a resume compares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evalkit.backends.entry import BackendEntry
from evalkit.backends.phase_config import PhaseSettings
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig, load_config
from evalkit.run.config_diff import changed_fields

ROOT = Path(__file__).resolve().parents[2]
SIM = {"name": "model", "command": ["{python}", "-m", "evalkit", "serve", "sim", "--port", "{port}"]}
FORGE = {"venv": ".forge/0.10.0", "command": ["-m", "forge.proxy", "--backend-url", "{upstream}", "--port", "{port}"]}


def entry(serve: dict[str, Any], kind: str = "openai") -> BackendEntry:
    return BackendEntry.model_validate({"label": "x", "kind": kind, "model": "m", "serve": serve})


def problem(serve: dict[str, Any], kind: str = "openai") -> str:
    with pytest.raises(ValidationError) as caught:
        entry(serve, kind)
    return str(caught.value)


def test_a_chain_takes_any_http_kind_and_names_its_phases() -> None:
    for kind in ("openai", "anthropic", "llama-server", "ollama"):
        phases = entry({"phases": [SIM, FORGE]}, kind).serve
        assert phases is not None and phases.phases is not None
    assert [p.label(i) for i, p in enumerate(entry({"phases": [SIM, FORGE]}).serve.phases or [])] == ["model", "forge"]
    llama = PhaseSettings.model_validate({"llama_server": {"model": "smollm2", "metrics": True}})
    assert llama.label(0) == "llama-server" and llama.llama_server and llama.llama_server.metrics


@pytest.mark.parametrize(
    ("serve", "kind", "message"),
    [
        ({"phases": [SIM]}, "sim", "a sim backend calls no server"),
        ({"parallel": 2}, "openai", "only a llama-server backend can be started by evalkit"),
        ({"parallel": 2, "phases": [SIM]}, "openai", "parallel: with `phases`, llama-server's settings go in"),
        ({"phases": [SIM, {"llama_server": {}}]}, "openai", "phases.1: llama_server can only be the first phase"),
        ({"phases": [{**SIM, "env": {"U": "{upstream}"}}]}, "openai", "the first phase (the model server) has no"),
        ({"phases": [SIM, {**FORGE, "name": "model"}]}, "openai", "two phases are named 'model'"),
        ({"phases": [{"llama_server": {}, "port": 8080}]}, "openai", "port: only a `command` phase takes it"),
        ({"phases": [{**FORGE, "python": "/usr/bin/python3"}]}, "openai", "give `python` or `venv`, not both"),
        ({"phases": [{"command": ["x", "{"]}]}, "openai", "write {{ for a literal brace"),
        ({"phases": []}, "openai", "at least 1 item"),
    ],
)
def test_refused(serve: dict[str, Any], kind: str, message: str) -> None:
    assert message in problem(serve, kind)


def test_a_literal_brace_is_doubled() -> None:
    phase = PhaseSettings.model_validate({"command": ["x", '{{"a": 1}}', "{port}"]})
    assert phase.command is not None and phase.command[1].format_map({"port": "1"}) == '{"a": 1}'


def _config(serve: dict[str, Any]) -> RunConfig:
    return RunConfig.model_validate(
        {
            "name": "c",
            "scenarios": ["x"],
            "backends": [{"label": "x", "kind": "openai", "model": "m", "serve": serve}],
            "strategies": {"t": ["trust_text"]},
        }
    )


def test_a_resume_ignores_ports_timeouts_and_readiness_but_not_the_venv() -> None:
    """Forge 0.7.3 answers readiness on /health, 0.10.0 on /forge/health too: how a phase is known to
    be up decides no answer."""
    stored = _config({"phases": [SIM, FORGE]}).model_dump(mode="json")
    faster = _config({"phases": [{**SIM, "timeout_s": 5}, {**FORGE, "port": 9000, "ready": "/forge/health"}]})
    assert changed_fields(stored, faster) == []
    other = _config({"phases": [SIM, {**FORGE, "venv": ".forge/0.9.5"}]})
    assert changed_fields(stored, other) == ["backends[x].serve.phases"]


def test_the_plain_serve_form_keeps_its_fingerprint() -> None:
    """Committed results of `serve:` entries were written before phases existed: their configs, read
    today, still name the same runs (a resume of them goes on)."""
    config = load_config(ROOT / "configs/adr013.yaml")
    header = load_results([ROOT / "results/adr013.jsonl"]).headers[0]
    first = {b["label"] for b in header.config["backends"]}  # the Forge entries came later (a resume)
    then = config.model_copy(
        update={"runs": header.runs_per_cell, "backends": [b for b in config.backends if b.label in first]}
    )
    assert then.fingerprint() == "862a5ec466e21532"
    assert changed_fields(header.config, config) == []


def test_llama_servers_threads_are_operational() -> None:
    """`threads: 1` makes llama-server on a loaded 2-core machine many times faster (README "Forge"),
    and decides no answer: a resume may change it, in a phase or in the plain `serve:` form."""
    llama = {"llama_server": {"model": "smollm2"}}
    stored = _config({"phases": [llama, FORGE]}).model_dump(mode="json")
    one = _config({"phases": [{"llama_server": {"model": "smollm2", "threads": 1}}, FORGE]})
    assert changed_fields(stored, one) == []
    plain = RunConfig.model_validate(
        {"name": "c", "scenarios": ["x"], "strategies": {"t": ["trust_text"]},
         "backends": [{"label": "s", "kind": "llama-server", "model": "smollm2", "serve": {"parallel": 2}}]}
    )  # fmt: skip
    threaded = plain.model_copy(deep=True)
    assert threaded.backends[0].serve is not None
    threaded.backends[0].serve.threads = 1
    assert changed_fields(plain.model_dump(mode="json"), threaded) == []

"""Everything a run needs, checked before its results file is created, so a failed start leaves none.

`preflight` is what `evalkit run` checks before it opens the output, and what `evalkit validate`
checks of a config (with `import_plugins=False`: validate runs no code from a config). Errors name
the config file and the field. (After a run, `evalkit.results.integrity.unreachable_backends` finds the
backends whose every counted run was an `infra_error`.)
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from evalkit.agents.registry import check_agents
from evalkit.backends import key_env, key_required
from evalkit.backends.entry import BackendEntry
from evalkit.backends.sim_profile import load_profile
from evalkit.errors import ConfigError, ModelUnavailable, NotInstalled, ResultsError
from evalkit.results.output_file import check_output, check_output_folder
from evalkit.results.records import Header
from evalkit.run.config import RunConfig
from evalkit.run.config_diff import agent_changes, changed_fields, guard_changes, phase_changes
from evalkit.run.matrix import scenario_hash
from evalkit.scenario.model import FAMILIES, Scenario, load_scenarios
from evalkit.scenario.statemocks import StatefulMocks
from evalkit.strategies import check_specs

__all__ = [
    "MAX_PLANNED_RUNS",
    "check_backends",
    "check_output_path",
    "check_resumable",
    "check_same_agents",
    "check_same_guards",
    "check_same_phases",
    "check_scenario_versions",
    "config_scenarios",
    "discard_empty_leftover",
    "preflight",
]

MAX_PLANNED_RUNS = 1_000_000  # a plan is held in memory; beyond this, split the matrix into configs


def preflight(
    config: RunConfig, *, import_plugins: bool = True, backends: Collection[str] | None = None
) -> list[Scenario]:
    """Check scenarios, families, backends (kind, URL, key, simulated profile), guard stacks and the plan's size;
    return the scenarios the run will use. `backends`: the labels this invocation runs (`run --backend`),
    whose keys, served models and profiles are checked now; the others are checked when they run."""
    where = config.source or config.name
    scenarios = config_scenarios(config)
    for scenario in scenarios:
        if scenario.state:  # allowlisted classes only; one that is not a class or cannot be built fails here
            StatefulMocks(scenario)
    # what is not installed here is said after every check of the file itself (validate passes such a file)
    missing = _check_backends(config, where, backends)
    for label, specs in config.strategy_specs().items():
        try:
            check_specs(specs, import_plugins=import_plugins)
        except ConfigError as exc:
            error = _like(exc, f"{where}: strategies.{label}: {exc}")
            if not isinstance(error, NotInstalled):
                raise error from exc
            missing.append(error)
    if import_plugins:  # an agent's module is imported and its install looked at: `run` only
        try:
            check_agents(config.agents, Path(config.base_dir or "."), scenarios)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    cells = config.cell_count(len(scenarios))
    if cells * config.runs > MAX_PLANNED_RUNS:
        raise ConfigError(
            f"{where}: runs: {cells} cells x {config.runs} runs is {cells * config.runs} runs; "
            f"the limit for one results file is {MAX_PLANNED_RUNS}"
        )
    if missing:
        raise missing[0]
    return scenarios


def check_backends(config: RunConfig, labels: Collection[str]) -> None:
    """The backends `labels` as `preflight` checks them (keys, served models, phases, profiles)."""
    missing = _check_backends(config, config.source or config.name, labels)
    if missing:
        raise missing[0]


def config_scenarios(config: RunConfig) -> list[Scenario]:
    """The scenarios a config runs: each of a built-in family or one the config declares under
    `custom_families`, then narrowed to `families:` (every name of which must match a scenario)."""
    where = config.source or config.name
    scenarios = load_scenarios(config.scenario_paths(), config.allow_state_modules)
    known = set(FAMILIES) | set(config.custom_families)
    for scenario in scenarios:
        if scenario.family not in known:
            raise ConfigError(
                f"{where}: custom_families: {scenario.source} is of family {scenario.family!r}, "
                f"neither built in ({', '.join(FAMILIES)}) nor declared here"
            )
    if not config.families:
        return scenarios
    present = {s.family for s in scenarios}
    unknown = [f for f in config.families if f not in present]
    if unknown:
        raise ConfigError(
            f"{where}: families: {unknown} match no scenario "
            f"(the scenarios' families: {', '.join(sorted(present)) or 'none'})"
        )
    return [s for s in scenarios if s.family in config.families]


def _check_backends(config: RunConfig, where: str, labels: Collection[str] | None) -> list[NotInstalled]:
    """Check each backend entry; return what the valid ones need that is not installed here."""
    missing: list[NotInstalled] = []
    for i, entry in enumerate(config.backends):
        if labels is not None and entry.label not in labels:
            continue
        try:
            _check_backend(config, entry, f"{where}: backends.{i}")
        except NotInstalled as exc:
            missing.append(exc)
    return missing


def _check_backend(config: RunConfig, entry: BackendEntry, field: str) -> None:
    # kind and url were checked when the config was built; the key is checked now, at run time
    env_name = key_env(entry)
    if env_name and key_required(entry) and not os.environ.get(env_name):
        raise ConfigError(
            f"{field}.api_key_env: environment variable {env_name} is not set "
            f"(backend {entry.label!r} needs an API key)"
        )
    if entry.serve is not None:
        _check_serve(config, entry, field)
    if entry.kind == "sim":  # its model is a profile: shipped, or a YAML file
        try:
            load_profile(entry.model)
        except ConfigError as exc:
            raise _like(exc, f"{field}.model: {exc}") from exc


def _check_serve(config: RunConfig, entry: BackendEntry, field: str) -> None:
    """The template file and the model a `serve:` entry starts, resolved as the runner will (no server starts)."""
    from evalkit.backends.packaged import check_model
    from evalkit.backends.serve import template_path
    from evalkit.errors import ServerUnavailable

    assert entry.serve is not None
    if entry.serve.phases is not None:
        _check_phases(config, entry, field)
        return
    try:
        template_path(entry.serve.template, Path(config.base_dir or "."))
    except ConfigError as exc:  # its message starts with "serve.template:"
        raise ConfigError(f"{field}.{exc}") from exc
    try:
        check_model(entry.serve.model or entry.model)
    except (ConfigError, ServerUnavailable) as exc:
        raise _like(exc, f"{field}.serve.model: {exc}") from exc


def _check_phases(config: RunConfig, entry: BackendEntry, field: str) -> None:
    """Each phase of a `serve.phases` chain, resolved as the runner will (nothing starts)."""
    from evalkit.backends.packaged import check_model
    from evalkit.backends.phase_process import check_phase  # subprocess, httpx: serve entries only
    from evalkit.backends.serve import template_path
    from evalkit.errors import ServerUnavailable

    assert entry.serve is not None and entry.serve.phases is not None
    base_dir = Path(config.base_dir or ".")
    missing: list[NotInstalled] = []  # every phase is checked before one not installed here is said
    for i, phase in enumerate(entry.serve.phases):
        where = f"{field}.serve.phases.{i}"
        try:
            if phase.llama_server is not None:
                template_path(phase.llama_server.template, base_dir)
                check_model(phase.llama_server.model or entry.model)
            else:
                check_phase(phase, base_dir, str(Path(config.source).resolve()) if config.source else "")
        except (ConfigError, ServerUnavailable) as exc:
            message = str(exc).removeprefix("serve.")  # template_path names its field from `serve.`
            error = _like(exc, f"{where}.{'llama_server.' if phase.llama_server else ''}{message}")
            if not isinstance(error, NotInstalled):
                raise error from exc
            missing.append(error)
    if missing:
        raise missing[0]


def _like(exc: Exception, message: str) -> ConfigError:
    """`message` as a ConfigError that keeps whether `exc` said only that something is not installed here
    (a packaged model, a venv, Forge): `validate` passes such a config with a note."""
    missing = isinstance(exc, (NotInstalled, ModelUnavailable))
    return NotInstalled(message) if missing else ConfigError(message)


def check_output_path(output: Path, record_dir: Path | None = None) -> None:
    """A results file that can be created or appended to (not a directory or device), and a
    recordings directory that is one or can be made; neither under a file. Whether an existing
    results file may be continued or replaced is the caller's rule (`run --resume`, `rescore`)."""
    if output.exists() and not output.is_file():
        raise ResultsError(f"{output} is not a regular file: give the path of a results file (-o FILE.jsonl)")
    check_output(output, option="-o", replace_results=True)
    if record_dir is not None:
        check_output_folder(record_dir, option="--record")


def discard_empty_leftover(output: Path) -> bool:
    """True if `output` holds no complete line (a start that failed before writing its header):
    it is emptied, so the run starts afresh instead of refusing to touch it."""
    try:
        # a failed start wrote at most part of a header: a larger file without a newline is something
        # else, left for the reader to name rather than emptied
        if output.stat().st_size > 64 * 1024:
            return False
        data = output.read_bytes()
    except OSError:
        return False
    if b"\n" in data:
        return False
    if data:
        output.write_bytes(b"")
    return True


def check_resumable(config: RunConfig, headers: list[Header], output: Path) -> None:
    """A resume needs the file's config, with the same or a larger N (a larger one tops every cell up)."""
    first = headers[0]
    # the hash first, at the file's own N (-n may grow): equal hashes need no field-by-field diff
    if config.model_copy(update={"runs": first.runs_per_cell}).fingerprint() != first.config_hash:
        changed = changed_fields(dict(first.config), config)
        if changed:
            raise ResultsError(
                f"{output} was written by a different config: {', '.join(changed)} changed; "
                "resume needs the same config (only -n may grow)"
            )
    # an earlier resume may have grown N: the largest is what the file already holds
    largest = max(h.runs_per_cell for h in headers)
    if config.runs < largest:
        raise ResultsError(
            f"{output} has {largest} runs per cell; resuming with {config.runs} would drop runs: "
            f"pass -n {largest} (or more, to add runs to every cell)"
        )


def check_same_phases(headers: list[Header], backends: dict[str, Any], output: Path) -> None:
    """A resume's server phases run the code the runs already in the file ran (`backends`: this
    segment's descriptions, before its header is written): a config that reads `${FORGE_VERSION}`
    resumed without it would otherwise put two releases of a guard in one entry."""
    for label, info in backends.items():
        now = _phases(info)
        for header in headers:
            before = _phases(header.backends.get(label))
            # a backend evalkit does not start has no phases on either side: nothing to compare
            changes = phase_changes(before, now) if before is not None and now is not None else []
            if changes:
                raise ResultsError(
                    f"{output}: backend {label!r}, {'; '.join(changes)}; resuming would mix them in one entry: "
                    "resume with the same install, or write a new file (-o)"
                )


def check_same_guards(headers: list[Header], guards: dict[str, Any], output: Path) -> None:
    """The same for the guards that run someone else's code in process (`forge` from another
    venv's evalkit would run another forge-guardrails under the same strategy label)."""
    for header in headers:
        changes = guard_changes(header.guards, guards)
        if changes:
            raise ResultsError(
                f"{output}: {'; '.join(changes)}; resuming would mix them in one entry: "
                "resume with the same install, or write a new file (-o)"
            )


def check_same_agents(headers: list[Header], agents: dict[str, Any], output: Path) -> None:
    """The same for agent columns: a config whose agent `venv` reads `${PYDANTIC_AI_VERSION}`, resumed
    under another value, would put two releases of the agent in one column."""
    for header in headers:
        changes = agent_changes(header.agents, agents)
        if changes:
            raise ResultsError(
                f"{output}: {'; '.join(changes)}; resuming would mix them in one column: "
                "resume with the same install, or write a new file (-o)"
            )


def _phases(info: Any) -> list[Any] | None:
    started = info.get("started_by_evalkit") if isinstance(info, dict) else None
    phases = started.get("phases") if isinstance(started, dict) else None
    return phases if isinstance(phases, list) else None


def check_scenario_versions(scenarios: list[Scenario], versions: dict[str, tuple[str, str]], output: Path) -> None:
    """A resume adds runs judged against the scenarios as they are now: refuse it when runs already
    in the file were judged against another version of one (`versions`: run id -> scenario id and
    hash, of the records that carry one), since a cell would then count two versions together."""
    now = {s.id: scenario_hash(s) for s in scenarios}
    changed: dict[str, int] = {}
    for scenario, version in versions.values():
        # a scenario this run no longer runs adds no runs, so its old version mixes with nothing
        if scenario in now and version != now[scenario]:
            changed[scenario] = changed.get(scenario, 0) + 1
    if not changed:
        return
    named = ", ".join(f"{s} ({n} runs)" for s, n in sorted(changed.items()))
    raise ResultsError(
        f"{output}: scenario changed since its runs were judged: {named}; restore it, resume into a "
        f"new file, or re-judge the recorded runs first (`evalkit rescore {output} -o {output}`)"
    )

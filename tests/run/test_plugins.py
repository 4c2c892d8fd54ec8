"""Nothing from a config executes during `validate`; `run` imports a plugin and accepts
only a Strategy class, and whatever a plugin's module raises at import is a one-line error.

The plugin modules are written under tmp_path, which `monkeypatch.syspath_prepend` puts on the path
(what `PYTHONPATH=DIR` does for the CLI). Each test's modules get names of their own, so the import
cache of one test is never what another test sees. Side effects are files a module would create.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cli import main
from evalkit.errors import ConfigError
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig
from evalkit.run.preflight import preflight
from evalkit.run.runner import run_config
from evalkit.strategies.plugins import MAX_SOURCE_BYTES, check_plugin, load_plugin_class

SCENARIOS = str(Path(__file__).resolve().parents[2] / "scenarios" / "*" / "*.yaml")

GUARD = '''
from dataclasses import dataclass
from typing import ClassVar

from evalkit.strategies import BaseStrategy, Stop


@dataclass
class Escalate(BaseStrategy):
    """Hands every reply back to a human: a run's outcome shows that this guard judged it."""

    name: ClassVar[str] = "escalate_all"
    reason: str = "not reviewed"

    def judge(self, reply, view):
        return Stop("escalated", self.reason)
'''

Write = Callable[[str, str], str]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Write]:
    """`plugin(name, source)` writes `name.py` (or `pkg/__init__.py` for "pkg/__init__") on the path,
    under a fresh unique prefix, and returns the importable module name."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    prefix = f"evalkit_test_{uuid.uuid4().hex[:10]}_"

    def write(name: str, source: str) -> str:
        path = folder / f"{prefix}{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        return prefix + name.removesuffix("/__init__").replace("/", ".")

    yield write
    for module in [m for m in sys.modules if m.startswith(prefix)]:
        del sys.modules[module]


def write_config(path: Path, guard: Any) -> Path:
    doc = {
        "name": "plug",
        "seed": 5,
        "runs": 2,
        "scenarios": [SCENARIOS],
        "families": ["casual_greeting"],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local"}],
        "strategies": {"mine": [guard]},
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def validate(cfg: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """validate's exit code and its error line ('' if none)."""
    code = main(["validate", str(cfg)])
    err = capsys.readouterr().err
    return code, (one_line(err) if err.strip() else "")


def run(cfg: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["run", str(cfg), "-o", str(out), "--no-progress"])
    err = capsys.readouterr().err
    return code, (one_line(err) if err.strip() else "")


def test_os_system_in_a_config_runs_under_neither_validate_nor_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: validate executed the command, then said "does not implement the Strategy protocol"
    touched = tmp_path / "touched"
    cfg = write_config(tmp_path / "c.yaml", {"plugin": "os:system", "options": {"command": f"touch {touched}"}})
    code, line = validate(cfg, capsys)
    assert code == 1 and not touched.exists()
    assert line == (
        f"{cfg}: strategies.mine: plugin 'os:system': 'system' is a function; a plugin must be a Strategy class"
    )
    out = tmp_path / "r.jsonl"
    code, line = run(cfg, out, capsys)
    assert code == 2 and "plugin 'os:system': " in line and "a plugin must be a Strategy class" in line
    assert not touched.exists() and not out.exists()


def test_a_function_in_a_source_module_is_refused_without_calling_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    cfg = write_config(tmp_path / "c.yaml", {"plugin": "shutil:rmtree", "options": {"path": str(doomed)}})
    code, line = validate(cfg, capsys)  # shutil is read as source, not imported
    assert code == 1 and line.endswith(
        "plugin 'shutil:rmtree': 'rmtree' is a function; a plugin must be a Strategy class"
    )
    assert run(cfg, tmp_path / "r.jsonl", capsys)[0] == 2 and doomed.is_dir()


def test_a_class_that_is_not_a_strategy_is_never_instantiated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    touched = tmp_path / "touched"
    popen = {"plugin": "subprocess:Popen", "options": {"args": ["touch", str(touched)]}}
    cfg = write_config(tmp_path / "c.yaml", popen)
    validate(cfg, capsys)  # a class by its source; only run can tell it lacks the protocol
    code, line = run(cfg, tmp_path / "r.jsonl", capsys)
    assert code == 2 and "does not implement the Strategy protocol (lacks requires, prepare, judge, name)" in line
    assert not touched.exists()


def test_validate_imports_no_module_and_no_parent_package(
    plugin: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "imported"
    side_effect = f"with open({str(marker)!r}, 'a') as fh:\n    fh.write(__name__ + '\\n')\n"
    package = plugin("pkg/__init__", side_effect)
    plugin("pkg/guards", side_effect + GUARD)
    cfg = write_config(tmp_path / "c.yaml", {"plugin": f"{package}.guards:Escalate"})
    assert validate(cfg, capsys) == (0, "") and not marker.exists()
    assert package not in sys.modules
    # run imports it: a config is code you chose to run, like a conftest.py
    assert run(cfg, tmp_path / "r.jsonl", capsys) == (0, "")
    assert marker.read_text().split() == [package, f"{package}.guards"]


@pytest.mark.parametrize(
    "raised",
    [
        "RuntimeError('plugin refuses to load\\nsecond line')",
        "KeyError('plugin refuses to load')",
        "SystemExit('plugin refuses to load')",
    ],
)
def test_a_module_that_raises_at_import_is_a_one_line_error(
    raised: str, plugin: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: anything but ImportError at import gave a traceback
    module = plugin("boom", f"raise {raised}\n" + GUARD)
    cfg, out = write_config(tmp_path / "c.yaml", {"plugin": f"{module}:Escalate"}), tmp_path / "r.jsonl"
    assert validate(cfg, capsys) == (0, "")  # its source has the class; validate does not run it
    code, line = run(cfg, out, capsys)
    exc_type = raised.split("(")[0]
    assert code == 2 and not out.exists()
    assert (
        line.startswith(
            f"evalkit: error: {cfg}: strategies.mine: plugin '{module}:Escalate': "
            f"cannot import '{module}': {exc_type}: "
        )
        and "plugin refuses to load" in line
    )


def test_a_module_that_does_not_parse_is_a_one_line_error_in_validate(
    plugin: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = plugin("broken", "class Escalate(:\n    pass\n")
    cfg = write_config(tmp_path / "c.yaml", {"plugin": f"{module}:Escalate"})
    code, line = validate(cfg, capsys)
    assert code == 1 and f"plugin '{module}:Escalate': the module does not parse: " in line
    code, line = run(cfg, tmp_path / "r.jsonl", capsys)
    assert code == 2 and "cannot import" in line and "SyntaxError" in line


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("os.system", "unknown strategy 'os.system'"),
        ("os:", "expected 'module:Class'"),
        ("no_such_module_for_evalkit_tests:Guard", "no module 'no_such_module_for_evalkit_tests' on the Python path"),
        ("json:NoSuchGuard", "module 'json' has no 'NoSuchGuard'"),
        ("tests.faultserver:NoSuchGuard", "module 'tests.faultserver' has no 'NoSuchGuard'"),
        ("json.no_such_sub:Guard", "no module 'json.no_such_sub'"),
    ],
)
def test_a_plugin_that_cannot_be_found_is_named_by_validate(
    target: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write_config(tmp_path / "c.yaml", {"plugin": target})
    code, line = validate(cfg, capsys)
    assert code == 1 and line.startswith(f"{cfg}: strategies.mine: ") and said in line


def test_a_strategy_plugin_runs_with_its_options(
    plugin: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = plugin("guard", GUARD)
    cfg = write_config(tmp_path / "c.yaml", {"plugin": f"{module}:Escalate", "options": {"reason": "from yaml"}})
    out = tmp_path / "r.jsonl"
    assert validate(cfg, capsys) == (0, "")
    assert run(cfg, out, capsys) == (0, "")
    runs = load_results([out]).runs
    greetings = {r.cell.scenario for r in load_results([out]).runs}
    assert len(runs) == len(greetings) * 2 and len(greetings) >= 4 and {r.outcome for r in runs} == {"escalated"}
    assert {(i.strategy, i.action, i.reason) for r in runs for i in r.interventions} == {
        ("escalate_all", "stop", "from yaml")
    }


def test_the_python_api_checks_and_loads_plugins_the_same_way(plugin: Write, tmp_path: Path) -> None:
    module = plugin("guard", GUARD)
    check_plugin(f"{module}:Escalate")
    assert module not in sys.modules  # checked from its source
    assert load_plugin_class(f"{module}:Escalate").name == "escalate_all"
    with pytest.raises(ConfigError, match=r"'system' is a function"):
        check_plugin("os:system")
    unknown = RunConfig.model_validate(
        {
            "name": "p",
            "scenarios": [SCENARIOS],
            "families": ["casual_greeting"],
            "backends": [{"label": "sim", "kind": "sim", "model": "strong"}],
            "strategies": {"mine": [{"plugin": f"{module}:Escalate", "options": {"reasons": "typo"}}]},
        }
    )
    preflight(unknown, import_plugins=False)  # options are only known once the class is imported
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match=r"^.*strategies\.mine: strategy .*unknown option\(s\) \['reasons'\]"):
        run_config(unknown, out)
    assert not out.exists()


@pytest.mark.parametrize("special", ["fifo", "dev-zero"])
def test_validate_reads_no_plugin_source_that_is_not_a_regular_file(
    special: str, plugin: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # read, a FIFO would block for ever and a link to /dev/zero fill memory :
    # the import system finds only regular files, so neither is a module
    module = plugin("special", "")
    path = next((tmp_path / "plugins").glob(f"{module}.py"))
    path.unlink()
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    cfg = write_config(tmp_path / "c.yaml", {"plugin": f"{module}:Guard"})
    code, line = validate(cfg, capsys)
    assert code == 1 and line.endswith(f"plugin '{module}:Guard': no module {module!r} on the Python path (PYTHONPATH)")


def test_validate_reads_no_oversized_plugin_source(
    plugin: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = plugin("huge", "")
    path = next((tmp_path / "plugins").glob(f"{module}.py"))
    with path.open("wb") as fh:
        fh.truncate(MAX_SOURCE_BYTES + 1)  # sparse: no disk used
    cfg = write_config(tmp_path / "c.yaml", {"plugin": f"{module}:Guard"})
    code, line = validate(cfg, capsys)
    assert code == 1 and f"the module's source is {MAX_SOURCE_BYTES + 1} bytes" in line


def test_a_name_imported_into_a_loaded_module_is_judged_by_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # its source only says `import sys`; the module is already imported, so what `sys` is can be seen
    code, line = validate(write_config(tmp_path / "c.yaml", {"plugin": "evalkit.cli:sys"}), capsys)
    assert code == 1 and line.endswith(
        "plugin 'evalkit.cli:sys': 'sys' is a module, not a class; a plugin must be a Strategy class"
    )


def test_os_system_is_refused_by_validate_when_os_is_read_from_source(tmp_path: Path) -> None:
    # with frozen modules off (a Python run from its build tree), `os` is a source module whose
    # `system` comes from `from posix import *`: validate said the config was valid
    touched = tmp_path / "touched"
    cfg = write_config(tmp_path / "c.yaml", {"plugin": "os:system", "options": {"command": f"touch {touched}"}})
    done = subprocess.run(
        [sys.executable, "-X", "frozen_modules=off", "-m", "evalkit", "validate", str(cfg)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and not touched.exists()
    assert one_line(done.stderr).endswith(
        "plugin 'os:system': 'system' is a function; a plugin must be a Strategy class"
    )

"""`Results.to_frame()`: pandas is the `pandas` extra (issue 31), so a plain install gets a one-line
error that names it instead of an ImportError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.results.reader import load_results
from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results" / "compare-models.jsonl"

# pandas made unimportable in a fresh interpreter, as on an install without the extra
_WITHOUT_PANDAS = (
    "import sys; sys.modules['pandas'] = None\n"
    "from evalkit import load_results\n"
    "from evalkit.errors import MissingExtra\n"
    "try:\n"
    f"    load_results([{str(RESULTS)!r}]).to_frame()\n"
    "except MissingExtra as exc:\n"
    "    print(exc)\n"
)


def test_to_frame_without_pandas_names_the_extra() -> None:
    done = subprocess.run([sys.executable, "-c", _WITHOUT_PANDAS], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "Results.to_frame() needs pandas: pip install 'evalkit[pandas]'"
    assert done.stderr == ""


def test_to_frame_has_one_row_per_run() -> None:
    pytest.importorskip("pandas", reason=needs_extra("pandas"))
    results = load_results([RESULTS])
    frame = results.to_frame()
    assert len(frame) == len(results.runs)
    assert sorted(frame["run_id"]) == sorted(r.run_id for r in results.runs)


def test_pandas_is_no_hard_dependency() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.startswith("pandas")]
    assert project["optional-dependencies"]["pandas"] == ["pandas>=2.1"]

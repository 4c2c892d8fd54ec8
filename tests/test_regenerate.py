"""Every committed artefact is what scripts/regenerate.py makes from the committed results.

One test per artefact (reports, gate markdown, the calibration page, the fitted profiles, the generated
blocks and sim figures of the documentation's pages), each made in memory by the command the pages give for it and
compared with the committed file byte for byte (a report's stamp is its runs' time, not the clock).
About a minute of CPU in all, most of it the simulations behind the sim figures and the calibration
page.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regenerate", ROOT / "scripts" / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regenerate"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
ARTEFACTS = SCRIPT.artefacts()


@pytest.mark.parametrize("artefact", ARTEFACTS, ids=lambda a: a.path)
def test_the_committed_artefact_is_what_the_committed_results_make(artefact) -> None:  # type: ignore[no-untyped-def]
    # the BFCL tables are BFCL's checker's, and the fits replay BFCL's multi-turn runs (classes of bfcl_eval)
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    before = os.getcwd()
    try:
        with SCRIPT._in_root():
            new = SCRIPT.made(artefact)
    finally:
        os.chdir(before)
    committed = (ROOT / artefact.path).read_text(encoding="utf-8")
    assert committed == new, f"{artefact.path} is stale: run python scripts/regenerate.py"


def test_every_report_and_fitted_profile_has_its_command() -> None:
    """A committed report or profile the script does not make could drift unseen."""
    committed = {
        str(p.relative_to(ROOT))
        for folder in ("reports", "evalkit/profiles/fitted")
        for p in (ROOT / folder).iterdir()
        if p.is_file()
    }
    assert committed == {a.path for a in ARTEFACTS} - {a.path for a in SCRIPT.pages()}

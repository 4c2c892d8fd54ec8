"""Regenerate the fitted simulated profiles of the packaged models from the committed results, or
check that the committed ones still match.

Each profile in evalkit/profiles/fitted/ is `evalkit sim fit` over every committed results file
(results/*.jsonl), for one packaged model; tests/simfit/test_fitted_profiles.py fails when a
committed profile and this script's output disagree.

    python scripts/fit_profiles.py          # rewrite evalkit/profiles/fitted/*.yaml
    python scripts/fit_profiles.py --check  # exit 1 and name the stale profiles
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FITTED = ROOT / "evalkit" / "profiles" / "fitted"
MODELS = ("smollm2", "gemma3-270m")


def results_files() -> list[Path]:
    """The committed results files: git-ignored ones (command 1's results/default.jsonl, a README block's
    output) are not the committed record the fitted profiles are checked against."""
    return sorted(ROOT / name for name in committed("results") if name.endswith(".jsonl"))


def committed(folder: str) -> list[str]:
    """The files git tracks under `folder` (paths relative to the root); without git, every file there."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", folder], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        return sorted(str(p.relative_to(ROOT)) for p in (ROOT / folder).iterdir() if p.is_file())
    return sorted(name for name in listed.split("\0") if name and "/" not in name[len(folder) + 1 :])


def path_of(model: str) -> Path:
    return FITTED / f"{model}.yaml"


def fitted_text(model: str) -> str:
    """The text the fit gives now for `model`'s profile."""
    from evalkit.cli.sim_cmd import profile_yaml
    from evalkit.scenario.model import load_scenarios

    os.chdir(ROOT)  # the scenarios are looked up by id under scenarios/
    scenarios = load_scenarios(sorted(Path("scenarios").rglob("*.yaml")))
    return profile_yaml(results_files(), model, scenarios)


def expected() -> dict[Path, str]:
    """Each fitted profile's path and the text the fit gives for it now."""
    return {path_of(m): fitted_text(m) for m in MODELS}


def stale() -> list[str]:
    return [p.name for p, text in expected().items() if not p.exists() or p.read_text() != text]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed profile is stale")
    args = parser.parse_args()
    if args.check:
        found = stale()
        if found:
            print(f"stale fitted profiles: {', '.join(found)} (run python scripts/fit_profiles.py)")
        return 1 if found else 0
    FITTED.mkdir(parents=True, exist_ok=True)
    for path, text in expected().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())

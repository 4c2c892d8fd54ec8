"""The documentation's figures for the fitted SmolLM2 profile: how well it predicts the committed real runs.

Runs `evalkit sim check` (the committed fitted profile, the committed results, seed 0, 20 posterior
draws x 10 runs per cell) and prints the block that the page "A simulated model fitted to a real one"
(docs/sim-fitting.md: whichever page of scripts/doc_pages.py holds the markers) holds between
`<!-- sim-figures -->` markers (not `generated:` ones: scripts/readme_findings.py owns those, and
this block takes a minute or two to compute, too long for its test).

    python scripts/sim_figures.py          # print the block
    python scripts/sim_figures.py --write  # and write it into its page
    python scripts/sim_figures.py --check  # exit 1 when its page holds other figures
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "scripts") not in sys.path:  # run as a file, or imported by scripts/regenerate.py
    sys.path.insert(0, str(ROOT / "scripts"))

from doc_pages import doc_pages, name_of  # noqa: E402

PROFILE = "evalkit/profiles/fitted/smollm2.yaml"
CHECKED = ("results/adr013.jsonl", "results/compare-models.jsonl")
_BLOCK = re.compile(r"(<!-- sim-figures -->\n)(.*?)(<!-- /sim-figures -->)", re.S)


def block() -> str:
    from evalkit.backends.sim_profile import load_profile
    from evalkit.cli.sim_cmd import format_check
    from evalkit.scenario.model import load_scenarios
    from evalkit.simfit.check import check
    from evalkit.simfit.classify import classify_files

    os.chdir(ROOT)
    scenarios = load_scenarios(sorted(Path("scenarios").rglob("*.yaml")))
    profile = load_profile(PROFILE)
    assert profile.fitted is not None
    found = classify_files(CHECKED, profile.fitted.model, scenarios)
    result = check(profile, found, scenarios, draws=20, runs=10, seed=0)
    command = f"evalkit sim check {PROFILE} {' '.join(CHECKED)}"
    return "\n".join(["```", f"$ {command}", profile.label(), *format_check(result), "```", ""])


def page() -> Path:
    """The page that holds the `<!-- sim-figures -->` block."""
    for path in doc_pages():
        if _BLOCK.search(path.read_text(encoding="utf-8")):
            return path
    raise SystemExit("no page of the documentation holds a <!-- sim-figures --> block")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = block()
    where = page()
    readme = where.read_text(encoding="utf-8")
    match = _BLOCK.search(readme)
    if args.check:
        same = match is not None and match.group(2) == text
        print(f"{name_of(where)} figures are {'current' if same else 'stale: run --write'}")
        return 0 if same else 1
    print(text, end="")
    if args.write and match is not None:
        where.write_text(readme[: match.start(2)] + text + readme[match.end(2) :], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())

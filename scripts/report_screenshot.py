"""The README's report screenshot (docs/images/report-default.png), remade from command 1's run.

Runs what command 1 runs (`evalkit run configs/default.yaml --resume`: nothing when
results/default.jsonl is complete), writes its HTML report to a temporary folder and takes the first
screen of it in the headless Chromium the browser tests use (tests/report/browser.py; install it with
scripts/install-chromium.sh). The picture shows SIMULATED results, as the report says on it.

    python scripts/report_screenshot.py            # rewrites docs/images/report-default.png
    python scripts/report_screenshot.py -o x.png   # anywhere else
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PNG = ROOT / "docs" / "images" / "report-default.png"
WIDTH, HEIGHT = 1280, 900  # a laptop's first screen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-o", "--output", type=Path, default=PNG, help=f"the PNG to write (default: {PNG.relative_to(ROOT)})"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from evalkit.cli import main as evalkit
    from tests.report.browser import BrowserError, screenshot

    results = ROOT / "results" / "default.jsonl"
    if evalkit(["run", str(ROOT / "configs" / "default.yaml"), "--resume", "-o", str(results)]) != 0:
        return 1
    with tempfile.TemporaryDirectory() as folder:
        html = Path(folder) / "default.html"
        if evalkit(["report", str(results), "-o", str(html)]) != 0:
            return 1
        try:
            screenshot(html, args.output, width=WIDTH, height=HEIGHT)
        except BrowserError as error:
            print(f"report_screenshot: {error}", file=sys.stderr)
            return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

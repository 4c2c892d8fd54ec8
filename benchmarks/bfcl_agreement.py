"""Agreement of evalkit's checker with BFCL's own, per BFCL category, on generated outputs: each possible
answer, each alternative and each with one mutation (single-turn), and the ground truth with one change in
one turn (multi-turn). Prints one row per category: outputs judged, same verdict, outputs where a named
deliberate difference applies, and the agreement on the rest. Needs bfcl-eval (and mpmath).

    python benchmarks/bfcl_agreement.py [--sample N] [--categories a,b]   # default: whole categories
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.importers.bfcl.data import CATEGORIES
from tests.bfcl.test_agreement_categories import agreement_row, table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=100_000, help="cases per category (seeded)")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    args = parser.parse_args()
    rows = []
    for category in args.categories.split(","):
        rows.append(agreement_row(category, args.sample))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    for row in rows:
        for line in row["differ"][:5]:
            print(f"differs: {line}")


if __name__ == "__main__":
    main()

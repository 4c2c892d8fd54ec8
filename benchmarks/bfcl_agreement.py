"""Agreement of evalkit's checker with BFCL's own, per BFCL category, on generated outputs (each possible
answer, alternative and omission, and each mutation at every slot it fits; for multi-turn, the ground truth
with one change in one turn), and the time each category takes. Prints one row per category: cases judged,
cases not imported, outputs judged, same verdict, outputs where a named deliberate difference applies, the
agreement on the rest, and seconds. Needs bfcl-eval (and mpmath).

    python benchmarks/bfcl_agreement.py [--sample N] [--categories a,b]   # default: whole categories
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.importers.bfcl.data import CATEGORIES
from tests.bfcl.test_agreement_categories import agreement_row, table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=None, help="cases per category (seeded; default: all)")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    args = parser.parse_args()
    rows, took = [], []
    for category in args.categories.split(","):
        started = time.perf_counter()
        rows.append(agreement_row(category, args.sample))
        took.append(time.perf_counter() - started)
        print(f"{table(rows[-1:]).splitlines()[-1]} {took[-1]:6.1f} s", flush=True)
    print(table(rows))
    print(f"{sum(r['outputs'] for r in rows)} outputs judged by both checkers in {sum(took):.1f} s")
    for row in rows:
        for line in row["differ"][:8]:
            print(f"differs: {line}")
        for line in row["not imported"][:3]:
            print(f"not imported: {line}")


if __name__ == "__main__":
    main()

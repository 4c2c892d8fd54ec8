"""Peak memory of `export inspect` against `report` on one generated results file (issue 36, item 4).

The file is made as `benchmarks/memory.py --huge` makes its million records (`write_huge`: one real run
of the default matrix, the simulated backend, its records repeated with new run indices), here with
`--runs` records (default 100,000). Each command runs in a child process of its own; its peak RSS is the
child's `ru_maxrss` from `os.wait4`. The goal: `export inspect` at or under `report`'s peak (before the
export streamed its runs, 20,000 runs took 1.36 GB against 139 MB for `report`, and 100,000 ended in a
MemoryError). It also reads the logs back with inspect_ai's reader (header and sample summaries) and
checks that every run is a sample. Needs the `inspect` extra.

    python benchmarks/export_memory.py                  # 100,000 runs (about 500 MB of disk in /tmp)
    python benchmarks/export_memory.py --runs 20000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.memory import Measure, _child, write_huge


def _samples(folder: Path) -> int:
    from inspect_ai.log import read_eval_log_sample_summaries

    return sum(len(read_eval_log_sample_summaries(str(p))) for p in folder.glob("*.eval"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="run records in the file (default 100,000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-export-", dir="/tmp") as tmp:
        folder = Path(tmp)
        path, runs = write_huge(folder, args.runs)
        print(f"{runs:,} run records, {path.stat().st_size / 1e6:.0f} MB")
        measures: dict[str, Measure] = {
            "report": _child(["report", str(path), "-o", str(folder / "r.html")], folder),
            "export inspect": _child(["export", "inspect", str(path), "-o", str(folder / "logs")], folder),
        }
        samples = _samples(folder / "logs")
    for name, m in measures.items():
        print(f"{name}: peak {m.peak_mb:.0f} MB, {m.wall_s:.1f} s")
    met = measures["export inspect"].peak_mb <= measures["report"].peak_mb and samples == runs
    print(f"samples read back: {samples:,} of {runs:,}")
    print(f"goal (export's peak at or under report's, every run a sample): {'met' if met else 'NOT MET'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())

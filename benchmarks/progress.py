"""What `evalkit run`'s progress display costs, hand-written (evalkit.cli.progress) against rich's
`Progress` (issue 31: "use rich if it costs less"). Two costs, measured in this one run:

- the import, in a fresh interpreter each time (`run` pays it once; rich is not a dependency of
  evalkit, so choosing it would also add a package to every install);
- the updates: the default config's 5,100 runs reported one by one to a terminal (a StringIO that
  says it is one), the display redrawn as it would be (evalkit's bar at most 10 times a second,
  rich's Live at its default 10 Hz refresh).

    python benchmarks/progress.py [--repeat 5]    # needs rich installed (pip install rich)
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5100  # configs/default.yaml


def _import_s(module: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _evalkit_updates() -> float:
    from evalkit.cli.progress import ProgressBar

    bar = ProgressBar(True, RUNS, stream=io.StringIO(), interactive=True)
    start = time.perf_counter()
    for done in range(1, RUNS + 1):
        bar(done, RUNS)
    return time.perf_counter() - start


def _rich_updates() -> float:
    from rich.console import Console
    from rich.progress import Progress

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    start = time.perf_counter()
    with Progress(console=console) as progress:
        task = progress.add_task("runs", total=RUNS)
        for done in range(1, RUNS + 1):
            progress.update(task, completed=done)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    try:
        import rich  # noqa: F401
    except ImportError:
        print("rich is not installed: pip install rich (it is no dependency of evalkit)")
        return 2
    cli = _import_s("evalkit.cli", args.repeat)  # what `run` has imported before it shows progress
    ours_import = max(_import_s("evalkit.cli.progress", args.repeat) - cli, 0.0)
    rich_import = max(_import_s("evalkit.cli, rich.progress", args.repeat) - cli, 0.0)
    ours = statistics.median(_evalkit_updates() for _ in range(args.repeat))
    theirs = statistics.median(_rich_updates() for _ in range(args.repeat))
    print(f"import beyond evalkit.cli: evalkit's {ours_import * 1000:.0f} ms, rich's {rich_import * 1000:.0f} ms")
    print(f"{RUNS} updates to a terminal: evalkit's {ours * 1000:.0f} ms, rich's {theirs * 1000:.0f} ms")
    print(f"rich / evalkit, updates: {theirs / max(ours, 1e-9):.1f} ×")
    return 0


if __name__ == "__main__":
    sys.exit(main())

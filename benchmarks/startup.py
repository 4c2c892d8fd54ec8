"""Start-up time of the `evalkit` command: `--help`, `--version`, `list` and `validate` must stay
under 0.5 s, which they do only while scipy, matplotlib and pandas load where they are used.

Each command runs in a fresh interpreter, `--repeat` times; the median is printed in seconds, beside
the bare interpreter's start-up (`python -c pass`) and `evalkit --help`, as ratios measured in this
one run, and a line says which of the heavy modules the command imported (it should be none).

`list` and `validate scenarios/` must take at most 5 × `evalkit --help` (issue 31). They read
unchanged scenario files from the user cache (evalkit.scenario.cache): the first of the repeats
fills it, the median is a warm start. The same two commands are also timed with the cache off
(`EVALKIT_CACHE_DIR=off`), the cold start every changed file costs.

    python benchmarks/startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 0.5
HELP_RATIO = 5.0  # `list` and `validate scenarios/` against `evalkit --help`
RATIO_COMMANDS = ("list", "validate scenarios/")
HEAVY = ("scipy", "matplotlib", "pandas")
COMMANDS = {
    "--help": ["-m", "evalkit", "--help"],
    "--version": ["-m", "evalkit", "--version"],
    "list": ["-m", "evalkit", "list"],
    "list scenarios": ["-m", "evalkit", "list", "scenarios"],
    "validate scenarios/": ["-m", "evalkit", "validate", str(ROOT / "scenarios")],
    "validate configs/default.yaml": ["-m", "evalkit", "validate", str(ROOT / "configs" / "default.yaml")],
    "list strategies": ["-m", "evalkit", "list", "strategies"],
    "list backends": ["-m", "evalkit", "list", "backends"],
    "list profiles": ["-m", "evalkit", "list", "profiles"],
    # every subcommand reads no results on its way to --help
    **{
        f"{command} --help": ["-m", "evalkit", command, "--help"]
        for command in ("run", "report", "gate", "validate", "list", "merge", "rescore", "import", "serve")
    },
}
# what a command imported, printed by the interpreter at exit
_PROBE = (
    "import atexit, sys; atexit.register(lambda: print('HEAVY', *sorted({m.split('.')[0] for m in sys.modules} "
    "& set(sys.argv.pop(1).split(','))), file=sys.stderr)); import runpy; sys.argv[0] = 'evalkit'; "
    "runpy.run_module('evalkit', run_name='__main__')"
)


def _time(args: list[str], repeat: int, **extra_env: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra_env)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _heavy(args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, ",".join(HEAVY), *args[2:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("HEAVY")]
    return " ".join(lines[-1].split()[1:]) if lines else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bare = _time(["-c", "pass"], args.repeat)
    print(f"python -c pass: {bare:.3f} s (median of {args.repeat})")
    print(f"{'command':32} {'median s':>9} {'× python':>9} {'× --help':>9}  {'budget':8} heavy modules imported")
    over = 0
    times: dict[str, float] = {}
    for name, command in COMMANDS.items():
        seconds = times[name] = _time(command, args.repeat)
        over += seconds > BUDGET_S
        verdict = "ok" if seconds <= BUDGET_S else "OVER"
        ratio = seconds / times["--help"]
        heavy = _heavy(command) or "none"
        print(f"evalkit {name:24} {seconds:9.3f} {seconds / bare:9.1f} {ratio:9.1f}  {verdict:8} {heavy}")
    print(f"{over} of {len(COMMANDS)} commands over the {BUDGET_S} s budget")
    for name in RATIO_COMMANDS:
        ratio = times[name] / times["--help"]
        cold = _time(COMMANDS[name], args.repeat, EVALKIT_CACHE_DIR="off")
        over += ratio > HELP_RATIO
        verdict = "ok" if ratio <= HELP_RATIO else "OVER"
        print(
            f"evalkit {name}: {ratio:.1f} × evalkit --help with the scenario cache ({verdict}: at most "
            f"{HELP_RATIO:g} ×); without it {cold / times['--help']:.1f} × ({cold:.3f} s)"
        )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

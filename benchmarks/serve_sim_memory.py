"""Memory of `evalkit serve sim` under hostile bodies (issue 36, item 4), measured once for the README.

Starts `python -m evalkit serve sim` as a child process and reads its resident memory (VmRSS, and the
peak VmHWM, from /proc: Linux) after each step: three 200 KB gzip posts that inflate to 200 MB each
(refused with 413 while they inflate), five 1 MB ones (1 GB each), then 150 conversations whose
1 MB opening no known scenario has. Before issue 36 the first step added 773 MB, the second took the
server to 1.7 GB, the third added 152 MB.

    python benchmarks/serve_sim_memory.py
"""

from __future__ import annotations

import gzip
import signal
import subprocess
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
MB = 1 << 20


def _memory_mb(pid: int) -> tuple[float, float]:
    """The process's resident memory now and at its peak, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def main() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "serve", "sim", "--port", "0", "--config", "configs/default.yaml"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split(" on ", 1)[1].split(";", 1)[0] + "/v1/chat/completions"
    steps = {
        "3 x 200 KB gzip (200 MB inflated)": [gzip.compress(b" " * (200 * MB), 9)] * 3,
        "5 x 1 MB gzip (1 GB inflated)": [gzip.compress(b" " * (1024 * MB), 9)] * 5,
    }
    try:
        with httpx.Client(timeout=300) as client:
            client.get(url.replace("/v1/chat/completions", "/health"))
            start, _ = _memory_mb(proc.pid)
            print(f"{'step':<40} {'status':>8} {'RSS MB':>8} {'added':>8} {'peak MB':>8}")
            print(f"{'started':<40} {'':>8} {start:8.0f} {0:8.0f} {start:8.0f}")
            for name, bodies in steps.items():
                codes = {client.post(url, content=b, headers={"Content-Encoding": "gzip"}).status_code for b in bodies}
                now, peak = _memory_mb(proc.pid)
                print(f"{name:<40} {','.join(map(str, codes)):>8} {now:8.0f} {now - start:8.0f} {peak:8.0f}")
            codes = set()
            for i in range(150):
                body = {"messages": [{"role": "user", "content": f"{i} " + "x" * MB}]}
                codes.add(client.post(url, json=body).status_code)
            now, peak = _memory_mb(proc.pid)
            name = "150 x 1 MB unknown openings"
            print(f"{name:<40} {','.join(map(str, codes)):>8} {now:8.0f} {now - start:8.0f} {peak:8.0f}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


if __name__ == "__main__":
    main()

"""A tiny guard-proxy stand-in for the server-phase tests: a real program evalkit starts as a phase.

    python tests/stub_proxy.py --upstream URL --port P [--extra-calls N] [--crash-after N]
                               [--status-500] [--never-ready] [--child-pid-file F] [--fault-file F]

It forwards `POST /v1/chat/completions` to `--upstream` and answers with the upstream's answer, after
`--extra-calls` more upstream calls of the same request (a proxy that retries on its own: the model
server serves N + 1 calls per call the client sees). Faults: exit after `--crash-after` requests (as
a crash, code 3), answer every request with HTTP 500, never answer `/health` with 200, or read the
fault from a file at each request (`crash`, `500` or nothing) so a test can change it mid-run.
`--child-pid-file` starts a child process (a sleeping Python) and writes its pid, so a test can see
that stopping the phase stops its children. GET requests are forwarded too (`/v1/models`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
from aiohttp import web


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--extra-calls", type=int, default=0)
    p.add_argument("--crash-after", type=int, default=0)
    p.add_argument("--status-500", action="store_true")
    p.add_argument("--never-ready", action="store_true")
    p.add_argument("--child-pid-file", type=Path)
    p.add_argument("--fault-file", type=Path)
    args = p.parse_args()
    if args.child_pid_file:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        args.child_pid_file.write_text(str(child.pid))
    served = 0

    def fault() -> str:
        if args.fault_file and args.fault_file.exists():
            return args.fault_file.read_text().strip()
        return ""

    async def health(request: web.Request) -> web.Response:
        return web.json_response(
            {"status": "starting" if args.never_ready else "ok"}, status=503 if args.never_ready else 200
        )

    async def chat(request: web.Request) -> web.Response:
        nonlocal served
        served += 1
        if fault() == "crash" or (args.crash_after and served > args.crash_after):
            os._exit(3)  # a crash: no answer, the connection drops
        if args.status_500 or fault() == "500":
            # a careless proxy names the key it was given (STUB_KEY, from the phase's `env:`) in its errors
            echo = f" (key {os.environ['STUB_KEY']})" if os.environ.get("STUB_KEY") else ""
            return web.json_response({"error": "stub proxy failure" + echo}, status=500)
        body = await request.read()
        headers = {"Content-Type": "application/json"}
        async with aiohttp.ClientSession() as session:
            for _ in range(args.extra_calls):
                async with session.post(args.upstream + "/v1/chat/completions", data=body, headers=headers) as r:
                    await r.read()
            async with session.post(args.upstream + "/v1/chat/completions", data=body, headers=headers) as r:
                return web.Response(status=r.status, body=await r.read(), content_type="application/json")

    async def forward(request: web.Request) -> web.Response:
        async with aiohttp.ClientSession() as session, session.get(args.upstream + request.path_qs) as r:
            return web.Response(status=r.status, body=await r.read(), content_type=r.content_type)

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/{tail:.*}", forward)
    print(f"stub proxy on 127.0.0.1:{args.port} in front of {args.upstream}", flush=True)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()

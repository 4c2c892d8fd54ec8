"""`evalkit serve sim --model PROFILE`: the simulated model over HTTP until Ctrl-C (see backends/sim_server.py).

It knows the scenarios of `--config` (a run config) or `--scenarios` (files or globs), so it can play
each conversation's intended solution; it listens on 127.0.0.1:8766 unless told otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import signal
import sys
from typing import TYPE_CHECKING

from evalkit.cli.options import HOST, PATH, PORT

if TYPE_CHECKING:
    from evalkit.backends.sim_server import SimServer
    from evalkit.scenario.model import Scenario

__all__ = ["DEFAULT_SIM_PORT", "add_parser", "run"]

DEFAULT_SIM_PORT = 8766


def add_parser(servers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = servers.add_parser(
        "sim",
        help="the simulated model (SIMULATED) on OpenAI's /v1/chat/completions and Anthropic's /v1/messages",
    )
    p.add_argument("--model", default="small-local", help="a simulated profile: shipped name or YAML path")
    p.add_argument(
        "--port", type=PORT, default=DEFAULT_SIM_PORT, help=f"port (default: {DEFAULT_SIM_PORT}; 0 picks a free one)"
    )
    p.add_argument("--host", type=HOST, default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    known = p.add_mutually_exclusive_group()
    known.add_argument("--config", type=PATH, help="know the scenarios this run config runs")
    known.add_argument("--scenarios", nargs="+", metavar="GLOB", help="know these scenario files (globs)")
    p.set_defaults(handler=run)


def _scenarios(args: argparse.Namespace) -> list[Scenario]:
    from evalkit.errors import ConfigError
    from evalkit.run.config import load_config
    from evalkit.run.preflight import config_scenarios
    from evalkit.scenario.model import load_scenarios

    if args.config is not None:
        return config_scenarios(load_config(args.config))
    paths: list[str] = []
    for pattern in args.scenarios or []:
        found = sorted(glob.glob(pattern, recursive=True))
        if not found:
            raise ConfigError(f"--scenarios: {pattern!r} matches no file")
        paths += found
    return load_scenarios(paths)


def run(args: argparse.Namespace) -> int:
    from evalkit.backends.sim_server import SimServer

    server = SimServer(args.model, _scenarios(args))
    with contextlib.suppress(KeyboardInterrupt):  # a signal before the loop's handlers are set
        asyncio.run(_serve(server, args.host, args.port))
    print("evalkit serve sim: stopped", flush=True)
    return 0


async def _serve(server: SimServer, host: str, port: int) -> None:
    from aiohttp import web

    # SIGINT and SIGTERM set an event the loop waits on: the handler runs between two steps of the
    # loop, wherever a request is (a body being inflated hands the loop back between chunks), rather
    # than raising KeyboardInterrupt inside whatever runs, where a library may swallow it
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(server.app(), access_log=None)
    await runner.setup()
    listening = None
    try:
        try:
            listening = await server.gate.listen(runner, host, port)
        except OSError as exc:
            from evalkit.errors import ServerUnavailable

            raise ServerUnavailable(f"evalkit serve sim: cannot listen on {host}:{port}: {exc.strerror}") from exc
        bound = listening.sockets[0].getsockname()[1]
        url = f"http://{host}:{bound}"
        lines = [
            f"evalkit serve sim: {server.profile} ({server.label}) on {url}; {len(server.index)} scenarios known",
            "In a run config:",
            f"backends:\n  - {{label: sim-http, kind: openai, model: {server.profile}, url: {url}/v1}}",
            "Press Ctrl-C to stop.",
        ]
        print("\n".join(lines), file=sys.stdout, flush=True)
        await stop.wait()
    finally:
        if listening is not None:
            listening.close()
        await runner.cleanup()

"""`evalkit serve llama --model smollm2`: run llama.cpp's server on loopback until Ctrl-C.

It listens on port 8765 by default (`evalkit.backends.serve.DEFAULT_PORT`), the URL that configs/smollm2.yaml
and configs/gemma3.yaml name, so `evalkit run configs/smollm2.yaml` works in a second terminal.
`evalkit serve sim` serves the simulated model instead (`evalkit.cli.serve_sim`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.backends.packaged import MODELS
from evalkit.backends.serve import CHAT_TEMPLATE, DEFAULT_PORT, LlamaServer, log_tail
from evalkit.cli import serve_sim
from evalkit.cli.options import CONTEXT, PATH, PORT, SECONDS, SERVER_SEED, SLOTS
from evalkit.errors import ServerUnavailable
from evalkit.results.output_file import check_output

__all__ = ["add_arguments", "config_snippet", "run"]


def add_arguments(serve: argparse.ArgumentParser) -> None:
    servers = serve.add_subparsers(dest="server", required=True, metavar="SERVER")
    p = servers.add_parser("llama", help="llama.cpp's llama-server with a packaged model or a .gguf file")
    p.add_argument(
        "--model",
        default="smollm2",
        help=f"a packaged model ({', '.join(MODELS)}) or a path to a .gguf file (default: smollm2)",
    )
    p.add_argument(
        "--port",
        type=PORT,
        default=DEFAULT_PORT,
        help=f"port on 127.0.0.1 (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    template = p.add_mutually_exclusive_group()
    template.add_argument(
        "--no-template",
        action="store_true",
        help="serve the model's own chat template (no tool support: native tools are unsupported)",
    )
    template.add_argument("--template", type=PATH, help="a different Jinja chat template file")
    p.add_argument("--parallel", type=SLOTS, default=2, help="server slots, i.e. concurrent requests (default: 2)")
    p.add_argument("--ctx-size", type=CONTEXT, default=8192, help="context tokens, shared by the slots (default: 8192)")
    p.add_argument(
        "--seed", type=SERVER_SEED, default=0, help="server RNG seed; requests may send their own (default: 0)"
    )
    p.add_argument("--threads", type=SLOTS, help="CPU threads (default: llama-server's choice, all cores)")
    p.add_argument("--log", type=PATH, help="server log file (default: a new file under the temp directory)")
    p.add_argument("--timeout", type=SECONDS, default=120.0, help="seconds to wait for /health (default: 120)")
    p.set_defaults(handler=run)
    serve_sim.add_parser(servers)


def config_snippet(model: str, url: str) -> str:
    """The `backends:` entry that points a run config at this server."""
    label = Path(model).stem if model.endswith(".gguf") else model
    return f"backends:\n  - {{label: {label}, kind: llama-server, model: {label}, url: {url}}}"


def run(args: argparse.Namespace) -> int:
    if args.log is not None:
        check_output(args.log, option="--log")  # the server appends to it: never to a results file
    template = None if args.no_template else (args.template or CHAT_TEMPLATE)
    server = LlamaServer(
        args.model,
        port=args.port or None,
        template=template,
        parallel=args.parallel,
        ctx_size=args.ctx_size,
        seed=args.seed,
        threads=args.threads,
        startup_timeout_s=args.timeout,
        log_path=args.log,
    )
    try:  # cli.main turns SIGTERM into KeyboardInterrupt, so it stops the server as Ctrl-C does
        with server:
            _announce(server)
            code = server.wait()
            raise ServerUnavailable(f"llama-server exited by itself with code {code}:\n{log_tail(server.log_path)}")
    except KeyboardInterrupt:
        print("evalkit serve: stopped", flush=True)
        return 0


def _announce(server: LlamaServer) -> None:
    if server.template is None:
        template = "the model's own (native tool calls unsupported)"
    else:
        template = f"{server.template} (native tool calls supported)"
    lines = [
        f"llama-server serving {server.model_name} on {server.url}",
        f"  model:         {server.model_path}",
        f"  chat template: {template}",
        f"  started in {server.startup_s or 0:.1f} s; log: {server.log_path}",
        "",
        "In a run config:",
        config_snippet(server.model_name, server.url),
        "",
        "Press Ctrl-C to stop.",
    ]
    print("\n".join(lines), file=sys.stdout, flush=True)

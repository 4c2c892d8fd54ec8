"""A small agent loop in the standard library only, run by the agent tests as a `command:` agent.

    python fake_agent.py loop          the usual loop: the MCP server's tools offered natively, each
                                       call run through MCP, until the model answers in text
    python fake_agent.py here          the usual loop, its system prompt naming its working folder and
                                       HOME, as Cline's does (each run has its own temporary ones)
    python fake_agent.py flood         calls the model again and again, whatever it answers
    python fake_agent.py crash         writes a line to stderr and exits with status 3
    python fake_agent.py giveup        one model call, then says it gave up by its own retry limit
    python fake_agent.py hang PIDFILE  starts a child in a session of its own that ignores SIGINT,
                                       writes both pids to PIDFILE, ignores SIGINT itself and sleeps;
                                       once PIDFILE exists, it is the usual loop (a resumed run ends)

The run's facts come in EVALKIT_* variables (evalkit/agents/command.py). MCP is spoken as plain
JSON-RPC over HTTP to evalkit's stateless streamable-HTTP server (JSON answers).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    # a real model on two loaded cores takes tens of seconds a call; the run's time limit bounds it
    with urllib.request.urlopen(request, timeout=180) as answer:
        return json.loads(answer.read())


def mcp(method: str, params: dict[str, Any]) -> Any:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    answer = post(
        os.environ["EVALKIT_MCP_URL"], {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers
    )
    return answer["result"]


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"model": os.environ["EVALKIT_MODEL"], "messages": messages, "tools": tools}
    headers = {"Authorization": f"Bearer {os.environ['EVALKIT_API_KEY']}"}
    answer = post(os.environ["EVALKIT_MODEL_BASE_URL"] + "/chat/completions", body, headers)
    message: dict[str, Any] = answer["choices"][0]["message"]
    return message


def loop(limit: int = 10, here: bool = False) -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]},
        }
        for t in mcp("tools/list", {})["tools"]
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": os.environ["EVALKIT_PROMPT"]}]
    system = os.environ.get("EVALKIT_SYSTEM", "")
    if here:
        system += f"\nWorking Directory: {os.getcwd()}\nHome: {os.environ['HOME']}"
    if system:
        messages.insert(0, {"role": "system", "content": system})
    for _ in range(limit):
        message = chat(messages, tools)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            print(json.dumps({"final": message.get("content") or ""}))
            return
        for call in calls:
            try:
                arguments = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                arguments = {}
            result = mcp("tools/call", {"name": call["function"]["name"], "arguments": arguments})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result["content"][0]["text"]})
    print(json.dumps({"final": None, "ended": "iteration_limit", "reason": f"{limit} turns"}))


def flood() -> None:
    messages = [{"role": "user", "content": os.environ["EVALKIT_PROMPT"]}]
    while True:
        try:
            chat(messages, [])
        except urllib.error.HTTPError:
            time.sleep(0.05)  # refused past the budget: a runaway agent keeps asking


def hang(pidfile: str) -> None:
    if os.path.exists(pidfile):
        loop()
        return
    code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(3600)"
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    with open(pidfile, "w") as out:
        out.write(f"{os.getpid()} {child.pid}\n")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    time.sleep(3600)


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "loop":
        loop()
    elif what == "here":
        loop(here=True)
    elif what == "flood":
        flood()
    elif what == "giveup":
        chat([{"role": "user", "content": os.environ["EVALKIT_PROMPT"]}], [])
        print(json.dumps({"final": None, "ended": "failed", "reason": "UnexpectedModelBehavior: retries spent"}))
    elif what == "crash":
        print("fake agent: the model client failed to load", file=sys.stderr)
        sys.exit(3)
    elif what == "hang":
        hang(sys.argv[2])

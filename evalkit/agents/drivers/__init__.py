"""Driver scripts: each runs in its agent's own venv (`.agents/<name>/`, scripts/install-agents.sh), not
in evalkit's, and imports nothing of evalkit. They read the run from `EVALKIT_*` variables
(evalkit/agents/command.py) and print one last JSON line: `{"final": TEXT}`, or `{"final": null,
"ended": "failed" | "iteration_limit", "reason": …}` when the agent gave up by its own rules."""

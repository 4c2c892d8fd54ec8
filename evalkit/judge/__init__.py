"""Judging one run: its calls and replies against the scenario's check, into check items, `completed`,
`correct` and a failure category (`verdict.judge_run`)."""

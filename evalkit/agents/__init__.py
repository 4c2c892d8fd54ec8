"""Agent loops under test (docs/agents-under-test.md; the adapter contract: `evalkit.agents.base`)."""

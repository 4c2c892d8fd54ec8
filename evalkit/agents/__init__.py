"""Agent loops under test (README, "Agents under test"; the adapter contract: `evalkit.agents.base`)."""

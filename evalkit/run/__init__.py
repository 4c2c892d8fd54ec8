"""Running a config: the matrix, preflight checks, the agent loop, the append-only runner and its
executors, and re-judging stored runs (`rescore`)."""

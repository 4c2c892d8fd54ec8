"""Fixed colours shared by every report: a failure category has the same colour in every plot and
tag of every report, whatever categories a given report happens to contain."""

from __future__ import annotations

__all__ = ["FAILURE_COLOURS", "OTHER_COLOUR", "failure_colour"]

FAILURE_COLOURS: dict[str, str] = {
    "text_instead_of_tool": "#4e79a7",
    "malformed_call": "#f28e2b",
    "hallucinated_tool": "#e15759",
    "wrong_arguments": "#76b7b2",
    "premature_answer": "#59a14f",
    "unneeded_tool_call": "#edc948",
    "wrong_answer": "#b07aa1",
    "iteration_limit": "#ff9da7",
    "escalated": "#9c755f",
    "guard_fatal": "#86412f",
    "runaway": "#d37295",
    "time_limit": "#a0cbe8",
    "degenerate_output": "#3b3b3b",
    "infra_error": "#bab0ac",
}
OTHER_COLOUR = "#d3d3d3"  # a category this evalkit does not know (a newer results file)


def failure_colour(category: str) -> str:
    return FAILURE_COLOURS.get(category, OTHER_COLOUR)

"""A stateful mock class for the MCP tests: results depend on earlier calls, and a bad call raises."""

from __future__ import annotations


class Shelf:
    def __init__(self) -> None:
        self.items: list[str] = []

    def put(self, item: str) -> dict[str, object]:
        self.items.append(item)
        return {"stored": item, "count": len(self.items)}

    def take(self, item: str) -> dict[str, object]:
        self.items.remove(item)  # ValueError when absent: the model reads why
        return {"taken": item, "left": list(self.items)}

"""The package's layout rules, checked from the source's own imports (CI runs this through
tests/test_layout.py; run it by hand with `python scripts/check_layout.py`).

- at most MAX_TOP_MODULES modules at the top of `evalkit/`;
- no module longer than MAX_LINES lines;
- every import, function-level ones included, points to the same layer or one below it (LAYERS);
- no import circle between modules, function-level imports included.

Printing `--graph` lists every module with the modules it imports, to read the structure.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "evalkit"
MAX_TOP_MODULES = 8
MAX_LINES = 400

# Bottom up. A module may import its own layer and the layers below it, never above.
LAYERS: list[set[str]] = [
    {"errors", "_yaml", "_model", "_imports"},
    {"chat", "prompt_mode"},
    {"stats"},
    {"results"},
    {"backends"},
    {"strategies"},
    {"scenario"},
    {"judge"},
    {"run"},
    {"simfit"},
    {"report"},
    {"gate"},
    {"importers"},
    {"cli", "integrations"},
    {"__init__", "__main__"},
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1 and parts != ["evalkit", "__init__"]:
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, known: dict[str, Path], name: str | None = None) -> set[str]:
    """The evalkit modules `path` imports anywhere in its body (each `from X import name` that names a
    submodule counts as importing that submodule)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("evalkit"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalkit"):
            subs = {f"{node.module}.{a.name}" for a in node.names}
            found.update(s for s in subs if s in known)
            if not subs <= set(known):
                found.add(node.module)
    return {m for m in found if m in known} - {name or module_name(path)}


def layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise SystemExit(f"{module}: its folder {top!r} is in no layer of scripts/check_layout.py")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def problems() -> list[str]:
    known = modules()
    graph = {m: imports(p, known) for m, p in known.items()}
    found: list[str] = []
    top = [p for p in PACKAGE.glob("*.py")]
    if len(top) > MAX_TOP_MODULES:
        found.append(f"{len(top)} modules at the top of evalkit/ (at most {MAX_TOP_MODULES})")
    for m, p in known.items():
        lines = len(p.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            found.append(f"{m}: {lines} lines (at most {MAX_LINES})")
        for target in sorted(graph[m]):
            if layer(target) > layer(m):
                found.append(f"{m} imports {target}, a layer above it")
    found += [f"import circle: {' -> '.join(c)}" for c in cycles(graph)]
    return found


def main() -> int:
    if "--graph" in sys.argv:
        known = modules()
        for m, p in known.items():
            print(m, "->", ", ".join(sorted(imports(p, known))) or "-")
        return 0
    found = problems()
    for line in found:
        print(line)
    print(f"layout: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    raise SystemExit(main())

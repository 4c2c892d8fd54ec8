"""The package's layout rules, checked from the source's own imports (CI runs this through
tests/test_layout.py; run it by hand with `python scripts/check_layout.py`).

- at most MAX_TOP_MODULES modules at the top of `evalkit/`;
- no module longer than MAX_LINES lines;
- every import, function-level ones included, points to the same layer or one below it (LAYERS); the
  package root is `evalkit/__init__.py`, the top layer: `import evalkit` and `from evalkit import name`
  import it (`__version__` is in `evalkit/_version.py`, at the bottom);
- no import circle between modules, function-level imports included;
- one import path per name: evalkit's code, tests, scripts and benchmarks import each name from the
  module that defines it, never through a package's re-export or another module's import, and only
  a package's `__init__` re-exports (its names are the users' API: the README, examples/ and
  tests/test_public_api.py use them);
- no module imports another's private names (`_name`; a private module's public names are the package's);
- no module-path compatibility layer (`MOVED_MODULES`): a module that moves is renamed everywhere;
- every backend (a class with `supports` and an async `complete`) is under `evalkit/backends/`;
- the architecture table (docs/architecture.md) names every module, lists the folders in the order of LAYERS, and
  its "imports" column is what each row's modules import (`--readme-imports` prints that column).

Printing `--graph` lists every module with the modules it imports, to read the structure.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "evalkit"
ARCHITECTURE = ROOT / "docs" / "architecture.md"  # the page whose table gives each module its layer
# Where the one-import-path rule applies. examples/ is written as a user's code, through the public
# names a package's `__init__` re-exports (as the README is); tests/test_public_api.py checks those.
IMPORTERS = ("evalkit", "tests", "scripts", "benchmarks")
PUBLIC_API_TEST = ROOT / "tests" / "test_public_api.py"
MAX_TOP_MODULES = 9
MAX_LINES = 400

# Bottom up. A module may import its own layer and the layers below it, never above.
LAYERS: list[set[str]] = [
    {"errors", "_yaml", "_model", "_imports", "_version", "profiles"},
    {"chat", "prompt_mode"},
    {"stats"},
    {"results"},
    {"backends"},
    {"strategies"},
    {"scenario"},
    {"judge"},
    {"agents"},
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
    submodule counts as importing that submodule). The root package is `evalkit.__init__`: `import
    evalkit` and `from evalkit import name` (a name, not a submodule) import it, and it is the top layer."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(_known(a.name, known) or a.name for a in node.names if a.name.startswith("evalkit"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalkit"):
            subs = {f"{node.module}.{a.name}" for a in node.names}
            found.update(s for s in subs if s in known)
            if not subs <= set(known):
                found.add(_known(node.module, known) or node.module)
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


@cache
def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once per run of the checks."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def defined_names(path: Path) -> frozenset[str]:
    """The names a module binds at its top level other than by importing them."""
    names: set[str] = set()

    def bind(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                bind(element)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For):
                bind(node.target)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
                visit(getattr(node, "finalbody", []))

    visit(_tree(path).body)
    return frozenset(names)


def home(module: str, name: str, known: dict[str, Path], seen: frozenset[str] = frozenset()) -> str | None:
    """The module that defines `name`, following the evalkit imports that re-export it from `module`
    (a name `module` imports from outside evalkit has its home there: `module` chose to export it)."""
    if name in defined_names(known[module]) or module in seen:
        return module
    for node in ast.walk(_tree(known[module])):
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            source = _known(node.module or "", known)
            return home(source, name, known, seen | {module}) if source else module
    return None


def _known(dotted: str, known: dict[str, Path]) -> str | None:
    """The checker's name for an evalkit module named in an import (the root package is `evalkit.__init__`)."""
    name = "evalkit.__init__" if dotted == "evalkit" else dotted
    return name if name in known else None


def _bound_modules(tree: ast.AST, known: dict[str, Path]) -> dict[str, str]:
    """Local names bound to an evalkit module (`import evalkit.x as y`, `from evalkit import x`)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _known(a.name, known):
                    root = a.name if a.asname else a.name.split(".")[0]
                    bound[a.asname or root] = _known(root, known) or root
        elif isinstance(node, ast.ImportFrom) and _known(node.module or "", known):
            for a in node.names:
                sub = _known(f"{node.module}.{a.name}", known)
                if sub:
                    bound[a.asname or a.name] = sub
    return bound


def _module_of(node: ast.expr, bound: dict[str, str], known: dict[str, Path]) -> str | None:
    """The evalkit module an expression names (`stats`, `evalkit.stats.exact`), if it names one."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = _module_of(node.value, bound, known)
        if parent:
            return _known(f"{parent.removesuffix('.__init__')}.{node.attr}", known)
    return None


def _uses(tree: ast.AST, known: dict[str, Path]) -> list[tuple[int, str, str]]:
    """(line, module, name) for each evalkit name a file takes from a module: by `from` imports and
    by attributes of a module it bound (`stats.wilson`)."""
    found: list[tuple[int, str, str]] = []
    bound = _bound_modules(tree, known)
    for node in ast.walk(tree):
        module: str | None
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            module = _known(node.module or "", known)
            if module:
                found += [
                    (node.lineno, module, a.name) for a in node.names if not _known(f"{node.module}.{a.name}", known)
                ]
        elif isinstance(node, ast.Attribute):
            module = _module_of(node.value, bound, known)
            if module and not _known(f"{module.removesuffix('.__init__')}.{node.attr}", known):
                found.append((node.lineno, module, node.attr))
    return found


def file_import_problems(path: Path, known: dict[str, Path]) -> list[str]:
    """Each name `path` takes from an evalkit module that does not define it."""
    found: list[str] = []
    for line, module, name in _uses(ast.parse(path.read_text(encoding="utf-8")), known):
        if name.startswith("__") or name in defined_names(known[module]):
            continue
        where = home(module, name, known)
        if where == module:  # a name from outside evalkit that `module` exports
            continue
        origin = f"import it from {where.removesuffix('.__init__')}" if where else "it is not defined there"
        found.append(f"{line}: {name} taken from {module.removesuffix('.__init__')}; {origin}")
    return found


def import_path_problems(known: dict[str, Path]) -> list[str]:
    files = [p for folder in IMPORTERS for p in sorted((ROOT / folder).rglob("*.py")) if p != PUBLIC_API_TEST]
    found = {f"{p.relative_to(ROOT)}:{line}" for p in files for line in file_import_problems(p, known)}
    return sorted(found)


def private_imports(known: dict[str, Path]) -> list[str]:
    """Names with one leading underscore that a module imports from another evalkit module: that
    module's private parts. (A module whose own name has one, `evalkit._model`, is the package's:
    its public names are shared.)"""
    found: list[str] = []
    for m, p in known.items():
        for node in ast.walk(_tree(p)):
            if not (isinstance(node, ast.ImportFrom) and _known(node.module or "", known)):
                continue
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                if private and not _known(f"{node.module}.{a.name}", known):
                    found.append(f"{m}:{node.lineno}: imports {a.name}, private to {node.module}")
    return found


def compatibility_layers(known: dict[str, Path]) -> list[str]:
    return [
        f"{m}: keeps MOVED_MODULES (rename a moved module everywhere instead)"
        for m, p in known.items()
        if "MOVED_MODULES" in defined_names(p)
    ]


def stray_exports(known: dict[str, Path]) -> list[str]:
    """Names a module's `__all__` lists but takes from another evalkit module: a second path to them.
    A package's `__init__` may re-export (its names are the users' API); no other module may."""
    found: list[str] = []
    for m, p in known.items():
        if p.name == "__init__.py":
            continue
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                for name in ast.literal_eval(node.value):
                    if home(m, name, known) not in (m, None):
                        found.append(f"{m}: __all__ re-exports {name} (import it from {home(m, name, known)})")
    return found


def stray_backends(known: dict[str, Path]) -> list[str]:
    """Backend classes outside evalkit/backends: one more place answering model calls."""
    found: list[str] = []
    for m, p in known.items():
        if m.startswith("evalkit.backends"):
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {(type(f), f.name) for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
                if (ast.AsyncFunctionDef, "complete") in names and (ast.FunctionDef, "supports") in names:
                    found.append(f"{m}: class {node.name} is a backend outside evalkit/backends")
    return found


def top(module: str) -> str:
    """The layer name of a module: its folder under evalkit/, or its own name at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def shown(name: str) -> str:
    """A layer name as the architecture table writes it: `stats/` for a folder, `chat.py` for a module."""
    return f"{name}/" if (PACKAGE / name).is_dir() else f"{name}.py"


def readme_rows(text: str) -> list[tuple[list[str], str, str]]:
    """The architecture table's rows: (the layer names its first cell gives, the whole row's text,
    its imports cell)."""
    section = text.split("\n## ", 1)[0]  # the page up to a section of its own: the table is in it
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not line.startswith("| `evalkit/") or len(cells) != 3:
            continue
        names = re.findall(r"`(?:evalkit/)?([A-Za-z_]+)(?:/|\.py)`", cells[0])
        rows.append((names, line, cells[2]))
    return rows


def _named(module: str, path: Path, row: str) -> bool:
    """Whether the row names `module`: its path below its folder, with or without `.py`, or its file name."""
    relative = path.relative_to(PACKAGE / top(module)) if top(module) != path.stem else Path(path.name)
    if path.name == "__init__.py" and not ast.parse(path.read_text(encoding="utf-8")).body[1:]:
        return True  # a package marker with a docstring only: nothing in it to name
    tokens = set(re.findall(r"`([^`]+)`", row))
    names = {str(relative), str(relative.with_suffix("")), path.name, path.stem, str(path.relative_to(ROOT))}
    return bool(names & tokens)


def folder_imports(graph: dict[str, set[str]], names: list[str]) -> list[str]:
    """The layer names the modules of `names` import, bottom layer first."""
    found = {top(d) for m, deps in graph.items() if top(m) in names for d in deps} - set(names)
    return sorted(found, key=lambda n: (layer(f"evalkit.{n}"), n))


def _imports_cell(graph: dict[str, set[str]], names: list[str]) -> str:
    return ", ".join(f"`{shown(n)}`" for n in folder_imports(graph, names)) or "-"


def architecture_problems(known: dict[str, Path], graph: dict[str, set[str]], text: str) -> list[str]:
    found: list[str] = []
    rows = readme_rows(text)
    placed = {name: (index, line) for index, (names, line, _) in enumerate(rows) for name in names}
    everything = [name for names in LAYERS for name in sorted(names)]
    found += [f"architecture table: no row for {shown(n)}" for n in everything if n not in placed]
    order = [layer(f"evalkit.{names[0]}") for names, _, _ in rows if names]
    if order != sorted(order):
        found.append("architecture table: the rows are not in the order of LAYERS")
    for m, p in known.items():
        if top(m) in placed and not _named(m, p, placed[top(m)][1]):
            found.append(f"architecture table: {m} is not named in the row of {shown(top(m))}")
    for names, _, cell in rows:
        expected = _imports_cell(graph, names)
        if cell != expected:
            found.append(f"architecture table: the row of {shown(names[0])} imports {expected}, not {cell}")
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
    found += compatibility_layers(known) + stray_exports(known) + stray_backends(known) + private_imports(known)
    found += architecture_problems(known, graph, ARCHITECTURE.read_text(encoding="utf-8"))
    return found + import_path_problems(known)


def main() -> int:
    if "--readme-imports" in sys.argv:  # the column docs/architecture.md's table must show
        known = modules()
        graph = {m: imports(p, known) for m, p in known.items()}
        for names in LAYERS:
            for name in sorted(names):
                print(f"{shown(name):16} {_imports_cell(graph, [name])}")
        return 0
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

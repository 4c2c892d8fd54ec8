"""Reading YAML that a user wrote: plain data only, with line numbers, and with limits.

PyYAML composes the file into nodes; we build Python values from those nodes ourselves rather than
letting a constructor run. So no tag can construct an object, an alias bomb is stopped by a node
budget, absurd nesting by a depth limit, and every value's line is known for error messages.

The limits hold while reading, not after: only a regular file is opened and at most `MAX_BYTES + 1`
bytes are read (a FIFO or a link to /dev/zero is refused, not waited on); depth and aliases are
counted as PyYAML composes, because its composer recurses once per level and would otherwise hit
Python's recursion limit before our depth check ran.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evalkit._model import first_problem
from evalkit.errors import ScenarioError

__all__ = ["LineMap", "YamlDocument", "read_yaml"]

MAX_BYTES = 1_000_000
MAX_DEPTH = 40
MAX_NODES = 200_000  # counts aliased nodes each time they are reached, which is what stops a bomb
MAX_ALIASES = 1_000

_PLAIN_TAGS = {
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}

LineMap = dict[tuple[str | int, ...], int]


@dataclass
class YamlDocument:
    path: str
    data: Any
    lines: LineMap = field(default_factory=dict)

    def line_of(self, loc: tuple[str | int, ...]) -> int | None:
        """The line of the deepest known part of `loc` (a pydantic error location)."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None

    def invalid(self, exc: ValidationError) -> str:
        """`path:line: field: message` for the first problem of a model validated from this document
        (the line when it is known): what every loader but the scenario's puts in its error."""
        problem = first_problem(exc)
        line = self.line_of(problem.loc)
        where = f"{self.path}:{line}" if line else self.path
        return f"{where}: {problem.field}: {problem.message}"


class _LimitedComposer(yaml.composer.Composer):
    """Composes nodes like PyYAML, counting nesting depth and aliases as it goes."""

    depth = 0
    aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[attr-defined]
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise _LimitExceeded(f"more than {MAX_ALIASES} aliases", line)
        if self.depth >= MAX_DEPTH:
            raise _LimitExceeded(f"nested deeper than {MAX_DEPTH} levels", line)
        self.depth += 1
        try:
            node: yaml.Node | None = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        return node


if yaml.__with_libyaml__:
    from yaml.cyaml import CParser  # type: ignore[attr-defined]

    class _LimitedLoader(_LimitedComposer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """libyaml's parser (C: a 50-file scenario folder reads ten times faster than with PyYAML's
        Python scanner) under our composer, so the limits still hold while composing."""

        def __init__(self, stream: str):
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
else:  # pragma: no cover - PyYAML built without libyaml

    class _LimitedLoader(_LimitedComposer, yaml.SafeLoader):  # type: ignore[no-redef]
        pass


class _LimitExceeded(Exception):
    def __init__(self, problem: str, line: int):
        super().__init__(problem)
        self.problem = problem
        self.line = line


class _Builder:
    def __init__(self, path: str):
        self.path = path
        self.nodes = 0
        self.lines: LineMap = {}
        self.scalar = yaml.SafeLoader("")  # only its scalar resolvers are used

    def fail(self, node: yaml.Node, problem: str) -> ScenarioError:
        return ScenarioError(self.path, problem, line=node.start_mark.line + 1)

    def build(self, node: yaml.Node, loc: tuple[str | int, ...], depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(node, f"more than {MAX_NODES} values (an alias bomb?)")
        if depth > MAX_DEPTH:
            raise self.fail(node, f"nested deeper than {MAX_DEPTH} levels")
        if node.tag not in _PLAIN_TAGS:
            raise self.fail(node, f"YAML tag {node.tag!r} is not allowed (plain data only)")
        self.lines.setdefault(loc, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, loc, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*loc, i), depth + 1) for i, item in enumerate(node.value)]
        try:
            return self.scalar.construct_object(node, deep=False)
        except (ValueError, yaml.YAMLError) as exc:  # e.g. an integer longer than Python converts
            raise self.fail(node, f"cannot read value: {str(exc).splitlines()[0][:200]}") from exc

    def mapping(self, node: yaml.MappingNode, loc: tuple[str | int, ...], depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise self.fail(key_node, "YAML merge keys ('<<') are not supported")
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(key_node, "mapping keys must be plain strings")
            # the key's literal text: YAML 1.1 would turn keys such as `on` or `no` into booleans
            key = key_node.value
            if key in out:
                raise self.fail(key_node, f"duplicate key {key!r}")
            out[key] = self.build(value_node, (*loc, key), depth + 1)
        return out


def _read_regular_file(name: str) -> bytes:
    """At most `MAX_BYTES + 1` bytes of a regular file; anything else is refused before reading."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ScenarioError(name, f"cannot read: {exc.strerror}") from exc
    except ValueError:  # a NUL byte in a name that came from a file
        raise ScenarioError(repr(name), "cannot read: the name holds a NUL byte") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ScenarioError(name, "not a regular file (a device, FIFO or socket is never read)")
        if info.st_size > MAX_BYTES:
            raise ScenarioError(name, f"file is {info.st_size} bytes; the limit is {MAX_BYTES}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(name, f"cannot read: {exc.strerror}") from exc
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:  # the file grew after fstat
        raise ScenarioError(name, f"file is over {MAX_BYTES} bytes, the limit")
    return raw


def _compose(name: str, text: str) -> yaml.Node:
    try:
        nodes = _compose_all(text)
    except _LimitExceeded as exc:
        raise ScenarioError(name, exc.problem, line=exc.line) from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ScenarioError(name, f"invalid YAML: {exc.problem}", line=line) from exc
    except yaml.YAMLError as exc:  # the reader's errors (a control character, say) are unmarked
        raise ScenarioError(name, f"invalid YAML: {str(exc).splitlines()[0]}") from exc
    if len(nodes) != 1 or nodes[0] is None:
        raise ScenarioError(name, f"expected one YAML document, found {len(nodes)}")
    return nodes[0]


def _compose_all(text: str) -> list[yaml.Node]:
    loader = _LimitedLoader(text)  # its reader already checks the text, and may raise
    try:
        nodes: list[yaml.Node] = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                nodes.append(node)
        return nodes
    finally:
        loader.dispose()


def read_yaml(path: str | Path) -> YamlDocument:
    """Read one YAML document safely; every problem raises `ScenarioError` naming the file."""
    name = str(path)
    raw = _read_regular_file(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line, column = raw.count(b"\n", 0, exc.start) + 1, exc.start - line_start + 1
        raise ScenarioError(
            name, f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line}, column {column}", line=line
        ) from exc
    if not text.strip():
        raise ScenarioError(name, "file is empty")
    builder = _Builder(name)
    data = builder.build(_compose(name, text), (), 0)
    if not isinstance(data, dict):
        raise ScenarioError(name, f"the top level must be a mapping, not {type(data).__name__}")
    return YamlDocument(name, data, builder.lines)

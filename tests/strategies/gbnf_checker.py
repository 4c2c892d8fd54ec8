"""A test-only GBNF parser and matcher that follow llama.cpp's `src/llama-grammar.cpp`.

`parse_gbnf` accepts and rejects the same texts as `llama_grammar_parser::parse` plus the checks of
`llama_grammar_init_impl` (a `root` rule, every referenced rule defined, no left recursion), with
the same error messages where practical. `GbnfGrammar.matches` decides whether a whole string is in
the grammar's language, so tests can check that a tool-call grammar accepts the calls it should and
rejects hallucinated names and wrong argument types, without a model or a server.

Grammar tokens (`<think>`, `<[123]>`) need a vocabulary and are rejected here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

__all__ = ["GbnfError", "GbnfGrammar", "parse_gbnf"]

MAX_REPETITION_THRESHOLD = 2000


class GbnfError(ValueError):
    """The text is not a grammar llama.cpp would load."""


@dataclass(frozen=True)
class Chars:
    """One code point from `ranges` (or, negated, not from them); `.` is Chars((), True)."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def ok(self, c: int) -> bool:
        return any(lo <= c <= hi for lo, hi in self.ranges) != self.negated


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Group:
    alternatives: tuple[tuple[Element, ...], ...]


@dataclass(frozen=True)
class Rep:
    item: Element
    low: int
    high: int | None  # None: unbounded


Element = Chars | Lit | Ref | Group | Rep
Alternatives = tuple[tuple[Element, ...], ...]


def _is_word(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "-")


@dataclass
class _Parser:
    src: str
    pos: int = 0
    rules: dict[str, Alternatives] = field(default_factory=dict)
    referenced: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    n_symbols: int = 0  # like symbol_ids.size(): names seen plus synthesized rules

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < len(self.src) else ""

    def fail(self, what: str) -> GbnfError:
        return GbnfError(f"{what} at {self.src[self.pos : self.pos + 20]!r}")

    def space(self, newline_ok: bool) -> None:
        while self.peek() in (" ", "\t", "#") or (newline_ok and self.peek() in ("\r", "\n")):
            if self.peek() == "#":
                while self.peek() not in ("", "\r", "\n"):
                    self.pos += 1
            else:
                self.pos += 1

    def name(self) -> str:
        start = self.pos
        while self.peek() and _is_word(self.peek()):
            self.pos += 1
        if self.pos == start:
            raise self.fail("expecting name")
        return self.src[start : self.pos]

    def symbol(self, name: str) -> None:
        if name not in self.seen:
            self.seen.add(name)
            self.n_symbols += 1

    def integer(self) -> int:
        start = self.pos
        while self.peek().isdigit() and self.peek().isascii():
            self.pos += 1
        if self.pos == start:
            raise self.fail("expecting integer")
        return int(self.src[start : self.pos])

    def char(self) -> int:
        if self.peek() == "\\":
            kind = self.peek(1)
            sizes = {"x": 2, "u": 4, "U": 8}
            if kind in sizes:
                digits = self.src[self.pos + 2 : self.pos + 2 + sizes[kind]]
                if len(digits) != sizes[kind] or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise self.fail(f"expecting {sizes[kind]} hex chars")
                self.pos += 2 + sizes[kind]
                return int(digits, 16)
            simple = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-"}
            if kind not in simple:
                raise self.fail("unknown escape")
            self.pos += 2
            return ord(simple[kind])
        if not self.peek():
            raise self.fail("unexpected end of input")
        self.pos += 1
        return ord(self.src[self.pos - 1])

    def alternates(self, nested: bool) -> Alternatives:
        out = [self.sequence(nested)]
        while self.peek() == "|":
            self.pos += 1
            self.space(True)
            out.append(self.sequence(nested))
        return tuple(out)

    def sequence(self, nested: bool) -> tuple[Element, ...]:
        items: list[Element] = []
        n_prev = 1
        while self.peek():
            c = self.peek()
            if c == '"':
                items.append(self.literal())
                n_prev = 1
            elif c == "[":
                items.append(self.char_class())
                n_prev = 1
            elif c in "<!":
                raise self.fail("grammar tokens need a vocabulary")
            elif _is_word(c):
                ref = self.name()
                self.symbol(ref)
                self.referenced.append(ref)
                items.append(Ref(ref))
                n_prev = 1
            elif c == "(":
                self.pos += 1
                self.space(True)
                before = self.n_symbols
                self.n_symbols += 1
                group = Group(self.alternates(True))
                n_prev = max(1, self.n_symbols - before)
                if self.peek() != ")":
                    raise self.fail("expecting ')'")
                self.pos += 1
                items.append(group)
            elif c == ".":
                self.pos += 1
                items.append(Chars((), True))
                n_prev = 1
            elif c in "*+?{":
                n_prev = self.repetition(items, n_prev, nested)
                continue
            else:
                break
            self.space(nested)
        return tuple(items)

    def literal(self) -> Lit:
        self.pos += 1
        out = []
        while self.peek() != '"':
            if not self.peek():
                raise self.fail("unexpected end of input")
            out.append(chr(self.char()))
        self.pos += 1
        return Lit("".join(out))

    def char_class(self) -> Chars:
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges = []
        while self.peek() != "]":
            if not self.peek():
                raise self.fail("unexpected end of input")
            low = self.char()
            high = low
            if self.peek() == "-" and self.peek(1) != "]":
                if not self.peek(1):
                    raise self.fail("unexpected end of input")
                self.pos += 1
                high = self.char()
            ranges.append((low, high))
        self.pos += 1
        return Chars(tuple(ranges), negated)

    def repetition(self, items: list[Element], n_prev: int, nested: bool) -> int:
        c = self.peek()
        self.pos += 1
        self.space(nested)
        if c == "{":
            low, high = self.braces(nested)
        else:
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        if not items:
            raise self.fail("expecting preceding item to */+/?/{")
        total = high if high is not None and high > 0 else (low if low > 0 else 1)
        if n_prev * total > MAX_REPETITION_THRESHOLD:
            raise self.fail(
                "number of rules that are going to be repeated multiplied by the new repetition exceeds sane defaults"
            )
        self.n_symbols += 1 if high is None else high - low
        items[-1] = Rep(items[-1], low, high)
        return n_prev * total

    def braces(self, nested: bool) -> tuple[int, int | None]:
        if not self.peek().isdigit():
            raise self.fail("expecting an int")
        low = self.integer()
        self.space(nested)
        high: int | None
        if self.peek() == "}":
            high = low
        elif self.peek() == ",":
            self.pos += 1
            self.space(nested)
            high = self.integer() if self.peek().isdigit() else None
            self.space(nested)
            if self.peek() != "}":
                raise self.fail("expecting '}'")
        else:
            raise self.fail("expecting ','")
        self.pos += 1
        self.space(nested)
        if low > MAX_REPETITION_THRESHOLD:
            raise self.fail("number of repetitions exceeds sane defaults")
        if high is not None and high > MAX_REPETITION_THRESHOLD:
            high = None
        return low, high

    def rule(self) -> None:
        name = self.name()
        self.symbol(name)
        self.space(False)
        if self.src[self.pos : self.pos + 3] != "::=":
            raise self.fail("expecting ::=")
        self.pos += 3
        self.space(True)
        self.rules[name] = self.alternates(False)
        if self.peek() == "\r":
            self.pos += 2 if self.peek(1) == "\n" else 1
        elif self.peek() == "\n":
            self.pos += 1
        elif self.peek():
            raise self.fail("expecting newline or end")
        self.space(True)


# --- the checks of llama_grammar_init_impl --------------------------------------------------------


def _nullable(element: Element, rules: dict[str, Alternatives], seen: frozenset[str] = frozenset()) -> bool:
    if isinstance(element, Chars):
        return False
    if isinstance(element, Lit):
        return element.text == ""
    if isinstance(element, Rep):
        return element.low == 0 or _nullable(element.item, rules, seen)
    alternatives = element.alternatives if isinstance(element, Group) else rules[element.name]
    if isinstance(element, Ref):
        if element.name in seen:
            return False
        seen = seen | {element.name}
    return any(all(_nullable(e, rules, seen) for e in alt) for alt in alternatives)


def _leading_refs(alternatives: Alternatives, rules: dict[str, Alternatives]) -> set[str]:
    """Rules that can be entered before any character is consumed."""
    out: set[str] = set()
    for alt in alternatives:
        for element in alt:
            inner = element.item if isinstance(element, Rep) else element
            if isinstance(inner, Ref):
                out.add(inner.name)
            elif isinstance(inner, Group):
                out |= _leading_refs(inner.alternatives, rules)
            if not _nullable(element, rules):
                break
    return out


def _check_left_recursion(rules: dict[str, Alternatives]) -> None:
    edges = {name: _leading_refs(alts, rules) for name, alts in rules.items()}
    state: dict[str, int] = {}  # 1 in progress, 2 done

    def visit(name: str) -> None:
        state[name] = 1
        for nxt in edges[name]:
            if state.get(nxt) == 1:
                raise GbnfError(f"unsupported grammar, left recursion detected for nonterminal {nxt!r}")
            if nxt not in state:
                visit(nxt)
        state[name] = 2

    for name in rules:
        if name not in state:
            visit(name)


def parse_gbnf(text: str, root: str = "root") -> GbnfGrammar:
    """Parse like llama.cpp; raise GbnfError with llama.cpp's reason when it would refuse the text."""
    parser = _Parser(text)
    parser.space(True)
    while parser.peek():
        parser.rule()
    for name in parser.referenced:
        if name not in parser.rules:
            raise GbnfError(f"Undefined rule identifier {name!r}")
    if root not in parser.rules:
        raise GbnfError(f"grammar does not contain a {root!r} symbol")
    _check_left_recursion(parser.rules)
    return GbnfGrammar(parser.rules, root)


# --- matching ------------------------------------------------------------------------------------


class GbnfGrammar:
    """A parsed grammar; `matches` is full-string membership, computed over sets of positions."""

    def __init__(self, rules: dict[str, Alternatives], root: str):
        self.rules, self.root = rules, root

    def matches(self, text: str) -> bool:
        # the cache is per text: (rule, position) -> the positions where a match of the rule can end
        @cache
        def rule_ends(name: str, start: int) -> frozenset[int]:
            return alternatives_ends(self.rules[name], start)

        def alternatives_ends(alternatives: Alternatives, start: int) -> frozenset[int]:
            out: set[int] = set()
            for alt in alternatives:
                positions = {start}
                for element in alt:
                    positions = {end for p in positions for end in element_ends(element, p)}
                    if not positions:
                        break
                out |= positions
            return frozenset(out)

        def element_ends(element: Element, start: int) -> frozenset[int]:
            if isinstance(element, Chars):
                ok = start < len(text) and element.ok(ord(text[start]))
                return frozenset({start + 1}) if ok else frozenset()
            if isinstance(element, Lit):
                hit = text.startswith(element.text, start)
                return frozenset({start + len(element.text)}) if hit else frozenset()
            if isinstance(element, Ref):
                return rule_ends(element.name, start)
            if isinstance(element, Group):
                return alternatives_ends(element.alternatives, start)
            return repeat_ends(element, start)

        def repeat_ends(rep: Rep, start: int) -> frozenset[int]:
            frontier, ends, count = {start}, set[int](), 0
            while frontier:
                if count >= rep.low:
                    ends |= frontier
                if rep.high is not None and count == rep.high:
                    break
                step = {end for p in frontier for end in element_ends(rep.item, p)}
                count += 1
                # a position already accepted with fewer repetitions has at least as much budget left,
                # so dropping it changes nothing and makes unbounded loops terminate
                frontier = step - ends if count > rep.low else step
            return frozenset(ends)

        return len(text) in rule_ends(self.root, 0)

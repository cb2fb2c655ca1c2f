"""SPEC §9 formulas from text: a hand-written tokenizer and a precedence-climbing parser.

Binding strength, strongest first: ``!``; the unary temporal ``X F G Y O H``; the binary
``U S`` (right-associative); ``&``; ``|``; ``->`` (right-associative); ``<->``. ``F G O
H U S`` take an optional bound ``[<=b]`` (b ≥ 0, simulated seconds). An atom is
``label`` or ``label(args)``: an optional first positional tool name, then ``key=value``
with keys ``tool agent proto wf task side_effects requires_approval detail.<name>``; a
value is a name, a number, ``true``/``false``, a double-quoted string or a set ``{a, b}``.

Every error is a :class:`FormulaError` at the offending token (0-based offset, and 1-based
line and column within the formula text). Bounds (docs/properties.md): a formula nests at
most :data:`MAX_DEPTH` levels (parentheses, unary operators, operator chains: the parser's
recursion and the AST's depth) and has at most :data:`MAX_FORMULA_CHARS` characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from sim.properties.ast import (
    ATOM_KEYS,
    BOUNDABLE,
    FUTURE_UNARY,
    PAST_UNARY,
    SIDE_EFFECTS,
    Atom,
    Binary,
    Condition,
    Const,
    Formula,
    Not,
    Scalar,
    Unary,
    Value,
)
from sim.properties.labels import LABEL_KEYS
from sim.spelling import did_you_mean

#: Binary operators: precedence (higher binds stronger) and right-associativity.
BINARY: dict[str, tuple[int, bool]] = {
    "<->": (1, False),
    "->": (2, True),
    "|": (3, False),
    "&": (4, False),
    "U": (5, True),
    "S": (5, True),
}
UNARY_TEMPORAL = FUTURE_UNARY | PAST_UNARY

#: The deepest nesting a formula may have: open parentheses, chained unary operators and
#: operands of binary operators all count one level (the AST's depth and the parser's
#: recursion stay within it, so no walk over a formula can exhaust Python's stack).
MAX_DEPTH = 100
#: The longest formula text, in characters.
MAX_FORMULA_CHARS = 20_000

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<number>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<string>"[^"\n]*")
  | (?P<name>[A-Za-z_](?:[A-Za-z0-9_.+]|-(?!>))*)
  | (?P<op><->|->|<=|[<!&|()\[\]{},=])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class ToolAttributes:
    """A scenario tool's ground truth that atoms may test (SPEC §9)."""

    side_effects: str  #: none | read | write | delete
    requires_approval: bool


class FormulaError(ValueError):
    """A formula that cannot be used, located at the offending token.

    ``pos`` is the 0-based character offset in the formula text; ``line`` and ``column``
    are 1-based within that text.
    """

    def __init__(self, text: str, pos: int, message: str) -> None:
        self.text = text
        self.pos = pos
        self.message = message
        self.line, self.column = position(text, pos)
        super().__init__(f"{self.line}:{self.column}: {message}")

    @property
    def located(self) -> str:
        """The message with its position inside the formula, for a file's diagnostic."""
        return f"{self.message} (at {self.line}:{self.column} of the formula)"


def position(text: str, pos: int) -> tuple[int, int]:
    """The 1-based (line, column) of offset ``pos`` in ``text``."""
    line = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    return line, pos - start + 1


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  #: number, string, name, op, temporal, end
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` (whitespace dropped), ending with an ``end`` token."""
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise FormulaError(text, pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind != "ws":
            word = m.group()
            if kind == "name" and word in UNARY_TEMPORAL | {"U", "S"}:
                kind = "temporal"
            out.append(Token(kind, word, pos))
        pos = m.end()
    out.append(Token("end", "", len(text)))
    return out


def _shown(tok: Token) -> str:
    return "the end of the formula" if tok.kind == "end" else f"`{tok.text}`"


class _Parser:
    def __init__(
        self,
        text: str,
        labels: Mapping[str, Collection[str]],
        tools: Mapping[str, ToolAttributes] | None,
        max_chars: int | None,
    ) -> None:
        if max_chars is not None and len(text) > max_chars:
            raise FormulaError(text, max_chars, f"formula longer than {max_chars} characters")
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.labels = labels
        self.tools = tools
        self.nesting = 0  #: the parser's open levels (parentheses, operators) now
        self.depths: dict[int, int] = {}  #: id(node) -> depth of the nodes built

    def deeper(self, tok: Token) -> None:
        """Open one nesting level at ``tok`` (close it with ``self.nesting -= 1``)."""
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise self.too_deep(tok)

    def too_deep(self, tok: Token) -> FormulaError:
        return self.error(tok, f"formula nested deeper than {MAX_DEPTH} levels")

    def built(self, node: Formula, tok: Token, *kids: Formula) -> Formula:
        """``node`` (made at ``tok`` from ``kids``), its depth kept within MAX_DEPTH."""
        depth = 1 + max((self.depths.get(id(k), 1) for k in kids), default=0)
        if depth > MAX_DEPTH:
            raise self.too_deep(tok)
        self.depths[id(node)] = depth
        return node

    # --- tokens ---
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def error(self, tok: Token, message: str) -> FormulaError:
        return FormulaError(self.text, tok.pos, message)

    def is_op(self, *texts: str) -> bool:
        return self.tok.kind in ("op", "temporal") and self.tok.text in texts

    # --- formulas ---
    def formula(self) -> Formula:
        if self.tok.kind == "end":
            raise self.error(self.tok, "empty formula")
        node = self.binary(0)
        tok = self.tok
        if tok.kind != "end":
            if tok.text == ")":
                raise self.error(tok, "unbalanced parenthesis: `)` closes nothing")
            raise self.error(tok, f"expected an operator, got {_shown(tok)}")
        return node

    def binary(self, min_prec: int) -> Formula:
        left = self.unary()
        while True:
            tok = self.tok
            spec = BINARY.get(tok.text) if tok.kind in ("op", "temporal") else None
            if spec is None or spec[0] < min_prec:
                return left
            prec, right_assoc = spec
            self.advance()
            bound = self.bound(tok) if tok.text in BOUNDABLE else None
            self.operand_after(tok)
            self.deeper(tok)
            right = self.binary(prec if right_assoc else prec + 1)
            self.nesting -= 1
            left = self.built(Binary(tok.text, left, right, bound, tok.pos), tok, left, right)

    def operand_after(self, op: Token) -> None:
        """Raise when the next token cannot start the operand ``op`` needs."""
        tok = self.tok
        starts = tok.kind in ("name", "string") or (
            tok.kind in ("op", "temporal")
            and (tok.text in ("!", "(") or tok.text in UNARY_TEMPORAL)
        )
        if not starts:
            side = "a right operand" if op.text in BINARY else "an operand"
            raise self.error(op, f"operator `{op.text}` without {side} (got {_shown(tok)})")

    def unary(self) -> Formula:
        tok = self.tok
        if tok.kind == "op" and tok.text == "!":
            self.advance()
            self.operand_after(tok)
            self.deeper(tok)
            operand = self.unary()
            self.nesting -= 1
            return self.built(Not(operand, tok.pos), tok, operand)
        if tok.kind == "temporal" and tok.text in UNARY_TEMPORAL:
            self.advance()
            bound = self.bound(tok) if tok.text in BOUNDABLE else None
            self.operand_after(tok)
            self.deeper(tok)
            operand = self.unary()
            self.nesting -= 1
            return self.built(Unary(tok.text, operand, bound, tok.pos), tok, operand)
        return self.primary()

    def bound(self, op: Token) -> float | None:
        if not self.is_op("["):
            return None
        self.advance()
        if not self.is_op("<="):
            raise self.error(self.tok, f"a bound reads `{op.text}[<=b]`: expected `<=`")
        self.advance()
        tok = self.tok
        value = float(tok.text) if tok.kind == "number" else math.nan
        if not (value >= 0 and math.isfinite(value)):
            raise self.error(
                tok,
                f"the bound of `{op.text}` must be a non-negative number of seconds, "
                f"not {_shown(tok)}",
            )
        self.advance()
        if not self.is_op("]"):
            raise self.error(self.tok, f"expected `]` closing the bound, got {_shown(self.tok)}")
        self.advance()
        return value

    def primary(self) -> Formula:
        tok = self.tok
        if tok.kind == "op" and tok.text == "(":
            self.advance()
            if self.is_op(")"):
                raise self.error(self.tok, "empty parentheses")
            if self.tok.kind == "end":
                raise self.error(tok, "unbalanced parenthesis: `(` is never closed")
            self.deeper(tok)
            inner = self.binary(0)
            self.nesting -= 1
            if not self.is_op(")"):
                if self.tok.kind == "end":
                    raise self.error(tok, "unbalanced parenthesis: `(` is never closed")
                raise self.error(self.tok, f"expected `)` or an operator, got {_shown(self.tok)}")
            self.advance()
            return inner
        if tok.kind == "name":
            self.advance()
            if tok.text in ("true", "false"):
                return Const(tok.text == "true", tok.pos)
            return self.atom(tok)
        if tok.kind == "op" and tok.text in BINARY:
            raise self.error(tok, f"operator `{tok.text}` without a left operand")
        if tok.kind == "temporal":  # U or S
            raise self.error(tok, f"operator `{tok.text}` without a left operand")
        if tok.kind == "op" and tok.text == ")":
            raise self.error(tok, "unbalanced parenthesis: `)` closes nothing")
        raise self.error(tok, f"expected a label, `true`, `false`, `!` or `(`, got {_shown(tok)}")

    # --- atoms ---
    def atom(self, name: Token) -> Atom:
        label = name.text
        if label not in self.labels:
            raise self.error(
                name,
                f"unknown label '{label}'{did_you_mean(label, self.labels)} (the trace labels, "
                f"docs/reference/trace.md)",
            )
        conds: list[Condition] = []
        if self.is_op("("):
            opened = self.advance()
            if self.is_op(")"):
                raise self.error(self.tok, f"empty argument list of `{label}`")
            first = True
            while True:
                if self.tok.kind == "end":
                    raise self.error(opened, "unbalanced parenthesis: `(` is never closed")
                conds.append(self.argument(label, first))
                first = False
                if self.is_op(","):
                    self.advance()
                    continue
                if self.is_op(")"):
                    self.advance()
                    break
                if self.tok.kind == "end":
                    raise self.error(opened, "unbalanced parenthesis: `(` is never closed")
                raise self.error(self.tok, f"expected `,` or `)` in the arguments of `{label}`")
        return Atom(label, tuple(conds), name.pos)

    def argument(self, label: str, first: bool) -> Condition:
        tok = self.tok
        nxt = self.toks[self.i + 1]
        if tok.kind in ("name", "string", "temporal") and not (
            nxt.kind == "op" and nxt.text == "="
        ):
            if not first:
                raise self.error(tok, "only the first argument may be a positional tool name")
            self.advance()
            name = tok.text[1:-1] if tok.kind == "string" else tok.text
            self.check_tool(tok, name)
            return Condition("tool", name, tok.pos)
        if tok.kind not in ("name", "temporal"):
            raise self.error(tok, f"expected a key or a tool name, got {_shown(tok)}")
        key = tok.text
        self.check_key(tok, label)
        self.advance()
        self.advance()  # '='
        vtok = self.tok
        value = self.value()
        self.check_value(key, vtok, value)
        return Condition(key, value, tok.pos)

    def check_key(self, tok: Token, label: str) -> None:
        key = tok.text
        if key.startswith("detail."):
            name = key[len("detail.") :]
            known = self.labels[label]
            if name not in known:
                have = ", ".join(sorted(known)) or "none"
                raise self.error(
                    tok,
                    f"unknown key '{key}': label `{label}` has no detail key '{name}'"
                    f"{did_you_mean(name, known)} (its detail keys: {have})",
                )
        elif key not in ATOM_KEYS:
            choices = [*ATOM_KEYS, "detail.<name>"]
            raise self.error(
                tok,
                f"unknown key '{key}'{did_you_mean(key, ATOM_KEYS)} (keys: {', '.join(choices)})",
            )

    def check_tool(self, tok: Token, name: Scalar) -> None:
        if self.tools is not None and name not in self.tools:
            raise self.error(tok, f"unknown tool '{name}'{did_you_mean(str(name), self.tools)}")

    def check_value(self, key: str, tok: Token, value: Value) -> None:
        members = value if isinstance(value, frozenset) else frozenset((value,))
        for v in sorted(members, key=str):
            if key == "tool":
                self.check_tool(tok, v)
            elif key == "side_effects" and v not in SIDE_EFFECTS:
                raise self.error(
                    tok, f"side_effects is one of {', '.join(SIDE_EFFECTS)}, not {v!r}"
                )
            elif key == "requires_approval" and not isinstance(v, bool):
                raise self.error(tok, f"requires_approval is true or false, not {v!r}")

    def value(self) -> Value:
        if self.is_op("{"):
            opened = self.advance()
            items: list[Scalar] = []
            while True:
                if self.tok.kind == "end":
                    raise self.error(opened, "unbalanced brace: `{` is never closed")
                items.append(self.scalar())
                if self.is_op(","):
                    self.advance()
                    continue
                if self.is_op("}"):
                    self.advance()
                    return frozenset(items)
                if self.tok.kind == "end":
                    raise self.error(opened, "unbalanced brace: `{` is never closed")
                raise self.error(self.tok, f"expected `,` or `}}` in a set, got {_shown(self.tok)}")
        return self.scalar()

    def scalar(self) -> Scalar:
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            number = float(tok.text)
            return (
                int(number) if number.is_integer() and re.fullmatch(r"-?\d+", tok.text) else number
            )
        if tok.kind == "string":
            self.advance()
            return tok.text[1:-1]
        if tok.kind in ("name", "temporal"):
            self.advance()
            if tok.text in ("true", "false"):
                return tok.text == "true"
            return tok.text
        raise self.error(
            tok, f"expected a value (a name, a number, true, false or a set), got {_shown(tok)}"
        )


def parse(
    text: str,
    labels: Mapping[str, Collection[str]] | None = None,
    tools: Mapping[str, ToolAttributes] | None = None,
    max_chars: int | None = MAX_FORMULA_CHARS,
) -> Formula:
    """The formula ``text`` as an AST. ``labels`` maps each known label to its detail keys
    (default: SPEC §5's); ``tools`` are the scenario's tools (None: any tool name passes);
    ``max_chars`` bounds the text (None: the formulas protomesh builds itself, whose size
    follows the scenario's). Raises :class:`FormulaError` at the offending token."""
    return _Parser(text, LABEL_KEYS if labels is None else labels, tools, max_chars).formula()

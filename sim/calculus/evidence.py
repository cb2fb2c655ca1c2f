"""Evidence of a dependency between two tools of a list (paper §6.4, the P4 check of
:mod:`sim.calculus.principles`): a dependency is reported only where a text says so.

A *text* of a tool is its description or the description of one of its input or output
properties, at any depth (:mod:`sim.calculus.schemas`); texts are cut into sentences. A
*mention* is another tool's exact name as a word of a sentence (``list_issue_types``,
`` `pull_request_read` ``). Evidence is one of:

- **stated**: a sentence of tool B mentions tool A with a *source cue* (``from A``, ``via
  A``, ``returned by A``, ``output of A``, ``use A to get ...``, ``call A first``): B
  requires A; or a sentence of A mentions B with a *feed cue* (``pass ... to B``, ``input
  for B``, ``before calling B``): A produces input for B;
- **schema and description**: an input ``x`` of B is a property of A's output schema (not
  among A's inputs), and the description of ``x`` mentions A, or, when A is the only tool of
  B's namespace that outputs ``x``, says it comes from an earlier call (``returned by``,
  ``obtained from``...).

A sentence that offers the other tool as an alternative (``instead``, ``prefer``, ``rather
than``, ``deprecated``, ``do not use``) is no evidence. Names shared by both tools' schemas
alone (memory's ``create_entities`` and ``read_graph`` both have ``entities``) are none
either. Time and memory are linear in the total length of the texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.calculus.mcp import ToolPlus
from sim.calculus.schemas import Walked, walk
from sim.calculus.sgd import SERVICE_SEPARATOR

__all__ = ["Evidence", "dependency_evidence", "quote_text"]

QUOTE_MAX = 160
"""Longest quoted sentence (characters) before it is cut with ``…``."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*")  # a tool name: dots inside only
_LEAD = r"(?:the\s+|a\s+|an\s+)?[`'\"]?$"
_SOURCE_BEFORE = re.compile(
    r"(?:\b(?:from|via)|\b(?:returned|produced|provided|given|obtained|retrieved|found|listed|"
    r"generated|reported)\s+(?:by|from|with|via|using|in)|\b(?:output|outputs|result|results|"
    r"response)\s+(?:of|from)|\bfirst\s+(?:call|run|use|invoke))\s+" + _LEAD,
    re.IGNORECASE,
)
_USE_BEFORE = re.compile(r"\b(?:use|call|run|invoke)\s+" + _LEAD, re.IGNORECASE)
_USE_AFTER = re.compile(
    r"^[`'\"]?(?:\s+tool)?(?:\s+first\b|[^.]{0,60}?\bto\s+(?:get|find|obtain|retrieve|list|"
    r"look\s+up|discover|fetch|learn|see|know)\b)",
    re.IGNORECASE,
)
_FEED_BEFORE = re.compile(
    r"(?:\b(?:pass|give|feed|send|provide)\b[^.]{0,40}?\b(?:to|into)|\binputs?\s+(?:to|for)|"
    r"\bfor\s+use\s+(?:with|by|in)|\bbefore\s+(?:calling|using|invoking|running))\s+" + _LEAD,
    re.IGNORECASE,
)
_GENERIC_SOURCE = re.compile(
    r"\b(?:returned|produced|provided|obtained|retrieved|found|listed)\s+(?:by|from|with|in)\b|"
    r"\b(?:from|of)\s+(?:a|an|the)\s+(?:previous|earlier|prior)\b",
    re.IGNORECASE,
)
_ALTERNATIVE = re.compile(
    r"\b(?:instead|prefer|preferred|rather\s+than|deprecated|do\s+not\s+use|don't\s+use|"
    r"alternative)\b",
    re.IGNORECASE,
)
_WINDOW = 80  # characters before a mention in which a cue is looked for


@dataclass(frozen=True, slots=True)
class Evidence:
    """``consumer`` depends on ``producer`` (paper §6.4 ``(producer, Requires)`` on the
    consumer, ``(consumer, ProducesInputFor)`` on the producer), because the text at ``where``
    of tool ``owner`` says ``quote``; ``kind`` is ``stated`` or ``schema``, ``slot`` the input
    named like the producer's output (schema and data-flow evidence), ``source`` what makes
    the producer the source (data-flow evidence, :mod:`sim.calculus.dataflow`)."""

    consumer: str
    producer: str
    owner: str
    where: str
    quote: str
    kind: str
    slot: str = ""
    source: str = ""

    def describe(self) -> str:
        """The evidence in words, the sentence quoted."""
        said = f'{self.owner}\'s {self.where} says "{self.quote}"'
        if self.kind == "dataflow":
            what = f"input {self.slot}" if self.slot else "a precondition"
            return f"{what} refers to {self.source}; {said}"
        if self.kind == "schema":
            return (
                f"input {self.slot} is in {self.producer}'s outputSchema (not among its inputs) "
                f"and {said}"
            )
        return said


def quote_text(sentence: str) -> str:
    """``sentence`` on one line, cut to :data:`QUOTE_MAX` characters with ``…`` (the quote of
    a P4 finding, paper §6.4)."""
    text = " ".join(sentence.split())
    return text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 1] + "…"


def _props(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    props = (schema or {}).get("properties")
    return props if isinstance(props, Mapping) else {}


def _namespace(name: str) -> str:
    return name.partition(SERVICE_SEPARATOR)[0] if SERVICE_SEPARATOR in name else ""


def _texts(t: ToolPlus, w: Walked) -> Iterator[tuple[str, str, str]]:
    """``(where, slot, text)``: the description, then input and output property
    descriptions (``slot`` is the input's name, else empty)."""
    if t.description:
        yield "description", "", t.description
    for props, is_input in ((w.inputs, True), (w.outputs, False)):
        for prop in props:
            if prop.description:
                slot = prop.name if is_input else ""
                yield f"{prop.path}.description", slot, prop.description


def _only(tools: set[str], own: str) -> str | None:
    """The one tool of ``tools`` other than ``own``, if there is exactly one (O(1))."""
    if len(tools) > 2 or (len(tools) == 2 and own not in tools):
        return None
    rest = [t for t in tools if t != own]
    return rest[0] if len(rest) == 1 else None


def _mentions(sentence: str, named: frozenset[str]) -> Iterator[tuple[str, int, int]]:
    for m in _WORD.finditer(sentence):
        if m.group() in named:
            yield m.group(), m.start(), m.end()


def dependency_evidence(
    tools: Sequence[ToolPlus], schemas: Sequence[Walked] | None = None
) -> list[Evidence]:
    """Every dependency (paper §6.4) the texts of ``tools`` give evidence of, once per
    (consumer, producer) pair, in the order of the consumer's texts (see the module
    docstring); ``schemas`` are the tools' walked schemas when the caller has them."""
    if schemas is None:
        schemas = [walk(t.input_schema, t.output_schema) for t in tools]
    names = frozenset(t.name for t in tools)
    # output property → the tools producing it as a new output (not one of their inputs),
    # and per (property, namespace)
    producers: dict[str, set[str]] = {}
    local: dict[tuple[str, str], set[str]] = {}
    for t in tools:
        inputs = _props(t.input_schema)
        for pname in _props(t.output_schema):
            if pname not in inputs:
                producers.setdefault(pname, set()).add(t.name)
                local.setdefault((pname, _namespace(t.name)), set()).add(t.name)
    found: dict[tuple[str, str], Evidence] = {}

    def add(ev: Evidence) -> None:
        if ev.consumer != ev.producer:
            found.setdefault((ev.consumer, ev.producer), ev)

    for t, w in zip(tools, schemas, strict=True):
        own = _namespace(t.name)
        for where, slot, text in _texts(t, w):
            made = producers.get(slot, set()) if slot else set()
            only = _only(local.get((slot, own), set()), t.name) if slot else None
            named = names.intersection(_WORD.findall(text)) - {t.name}
            if not named and only is None:
                continue  # the common case: one C-level scan of the text
            for sentence in _SENTENCE.split(text):
                if not sentence.strip() or _ALTERNATIVE.search(sentence):
                    continue
                quote = ""
                for other, start, end in _mentions(sentence, named):
                    quote = quote or quote_text(sentence)
                    before, after = sentence[max(0, start - _WINDOW) : start], sentence[end:]
                    if other in made:
                        add(Evidence(t.name, other, t.name, where, quote, "schema", slot))
                    elif _SOURCE_BEFORE.search(before) or (
                        _USE_BEFORE.search(before) and _USE_AFTER.search(after)
                    ):
                        add(Evidence(t.name, other, t.name, where, quote, "stated"))
                    elif _FEED_BEFORE.search(before):
                        add(Evidence(other, t.name, t.name, where, quote, "stated"))
                if only is not None and _GENERIC_SOURCE.search(sentence):
                    add(Evidence(t.name, only, t.name, where, quote_text(sentence), "schema", slot))
    return list(found.values())

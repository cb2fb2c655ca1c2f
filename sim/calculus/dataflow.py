"""Dependencies inferred from data flow (paper §6.4, the P4 check): an input of tool B that
refers to something only tool A of the list reports or creates.

*Producers* are indexed once per list, by the head noun (singular) of what they report:

- a tool's name or a ``method``/``action`` enum value with a list verb (:data:`LIST_VERBS`):
  ``list_gists`` reports gists, ``projects_list`` projects, ``get_review_comments`` review
  comments (rank 4);
- a phrase of one of its texts after a list verb: ``Get recent messages from a channel``
  reports messages, ``list workflow runs, jobs, and artifacts`` runs, jobs and artifacts
  (rank 3);
- a name whose verb creates (``create_entities`` creates entities; rank 2);
- a plural output property (``entities`` in an ``outputSchema``; rank 1).

An input (at any depth, :mod:`sim.calculus.schemas`) *refers* to a phrase when its
description says ``ID of the X``, ``X ID``, ``timestamp of the X``, ``name of the X``, ``X
names``, or its name is ``X_id``, ``XId``, ``X_ts``, ``X_sha``, ``X_slug``, ``XUUID``; or it
is named exactly like an output property of one other tool (``viewUUID``). B depends on A
when A is the best producer of the phrase's head: A's own qualifiers (``discussion`` in
``discussion comments``) all occur in B's name or in the input's name or description, a
qualifier of B's that names something listed is A's, then the highest rank, the most
qualifiers, the most name words in common with B; a tie between two tools is no evidence.
An input described as optional or with a default is no
dependency; neither is the name of what B itself creates (``create_repository``'s ``name``;
an id of it is). An input ``X_type`` refers to the X types a tool lists, all its qualifiers
required. A description that says ``a pending review needs to already exist``, or a first
sentence about a *pending* review, depends on the tool whose name creates reviews. A name's
object ends at a preposition (``add_comment_to_pending_review`` adds a comment); a qualifier
from a name always restricts, one from a text only when it is not in a quarter of the texts.

Producers are looked for in B's *namespace* first (the first word of its name when that is
no verb: ``slack`` of ``slack_post_message``, a prefix a gateway adds), then among the tools of
no namespace, so that two renamed copies of a list never depend on each other (the items of
a list and its renamed copy are exactly twice those of the list). A pool with more than
:data:`MAX_PRODUCERS` producers of one head is no evidence: with the indexes built once per
list, time is linear in the total length of the texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sim.calculus.evidence import Evidence, quote_text
from sim.calculus.mcp import ToolPlus
from sim.calculus.phrases import (
    ADJECTIVES,
    ID_WORDS,
    LIST_VERBS,
    STOP,
    TYPE_WORDS,
    list_phrases,
    name_object,
    plural,
    qualifiers,
    referent,
    singular,
    with_article,
    words_of,
)
from sim.calculus.schemas import Property, Walked, walk
from sim.calculus.writes import READ_VERBS, WRITE_VERBS, name_words

__all__ = ["MAX_PRODUCERS", "dataflow_evidence", "namespaces"]

_VERBS = READ_VERBS | WRITE_VERBS
MAX_PRODUCERS = 64
"""Most producers of one head noun that are compared for one input (beyond: ambiguous)."""
_MAKE_VERBS = frozenset({"create", "insert", "new"})  # add_sub_issue adds a link, not an issue
_CREATED = re.compile(
    r"\bcreat(?:e|es|ing)\s+(?:an?\s+|the\s+)?(?:new\s+)?(?:pending\s+)?([A-Za-z]+)",
    re.IGNORECASE,
)
_PENDING = re.compile(r"\bpending\s+((?:[A-Za-z][\w-]*\s+){0,3}[A-Za-z][\w-]*)", re.IGNORECASE)
"""What a tool's first sentence says is *pending*: created earlier, by another tool."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_OPTIONAL = re.compile(r"\boptional\b|\bdefaults?\s+to\b", re.IGNORECASE)
_EXISTS = re.compile(
    r"\b(?:an?|the)\s+((?:[A-Za-z][\w-]*\s+){0,3}?[A-Za-z][\w-]*)\s+(?:needs|has|must)\s+to\s+"
    r"(?:already\s+)?exist|\brequires\s+that\s+(?:an?|the)\s+((?:[A-Za-z][\w-]*\s+){0,3}?"
    r"[A-Za-z][\w-]*)\s+exists",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Producer:
    tool: str
    rank: int
    qualifiers: frozenset[str]  # the words before the head noun (singular)
    said: str  # what the producer's text says, quoted in the evidence
    words: frozenset[str] = frozenset()  # the tool's name words and the phrase (singular)
    own: frozenset[str] = frozenset()  # the tool's name words (singular)


@dataclass(frozen=True, slots=True)
class _Walked:
    """A tool with its input and output properties walked once."""

    tool: ToolPlus
    inputs: list[Property]
    outputs: list[Property]
    top_inputs: set[str]


def namespaces(names: Sequence[str]) -> dict[str, str]:
    """Per tool, its namespace (P4, paper §6.4): the first word of its name when that is no
    verb (``slack`` of ``slack_post_message``, a prefix a gateway adds), else ``""``."""
    out: dict[str, str] = {}
    for n in names:
        words = name_words(n)
        first = words[0] if len(words) > 1 else ""
        out[n] = "" if first in _VERBS or first in LIST_VERBS else first
    return out


Index = dict[str, list[_Producer]]


def _index(walked: Sequence[_Walked], spaces: dict[str, str]) -> Index:
    """Producers by head noun, and by head noun and namespace (``head@namespace``; ``head@``
    for the tools of no namespace)."""
    index: Index = {}

    own: frozenset[str] = frozenset()

    def add(head: str, p: _Producer) -> None:
        words = own | p.qualifiers | {head}
        full = _Producer(p.tool, p.rank, p.qualifiers, p.said, words, own)
        index.setdefault(singular(head), []).append(full)
        index.setdefault(f"{singular(head)}@{spaces[p.tool]}", []).append(full)

    for w in walked:
        t = w.tool
        own = frozenset(singular(x) for x in name_words(t.name))
        names = [t.name]
        for prop in w.inputs:
            enum = prop.schema.get("enum")
            if prop.name in ("method", "action", "operation") and isinstance(enum, list):
                names += [e for e in enum if isinstance(e, str)]
        for name in names:
            got = name_object(name_words(name))
            if got is None:
                continue
            kind, obj, _ = got
            head, quals = obj[-1], qualifiers(obj[:-1])
            if kind == "list" and plural(head):
                add(head, _Producer(t.name, 4, quals, f"its name {name!r}"))
            elif kind == "create" and name == t.name:
                add(head, _Producer(t.name, 2, quals, f"its name {name!r}"))
        for where, text in _texts(w):
            for phrase, of in list_phrases(text):
                head = phrase[-1]
                if plural(head) or of:
                    said = f'its {where} says "{quote_text(text)}"'
                    add(head, _Producer(t.name, 3, qualifiers(phrase[:-1]), said))
        inputs = w.top_inputs
        for prop in w.outputs:
            if prop.top and prop.name not in inputs and plural(prop.name):
                add(prop.name, _Producer(t.name, 1, frozenset(), f"its output {prop.name!r}"))
    return index


def _texts(w: _Walked) -> Iterator[tuple[str, str]]:
    if w.tool.description:
        yield "description", w.tool.description
    for prop in w.inputs:
        if prop.description:
            yield f"{prop.path}.description", prop.description


def _best(
    candidates: Sequence[_Producer],
    context: frozenset[str],
    wanted: frozenset[str],
    own: str,
    near: frozenset[str],
) -> tuple[_Producer | None, bool]:
    """The producer of the highest rank whose qualifiers all occur in ``context`` and whose
    words hold the ``wanted`` qualifiers, then with most qualifiers, then most name words in
    common with the consumer (``near``); None when two tools tie. The flag says whether any
    candidate was eligible."""
    scored = sorted(
        (
            (p.rank, len(p.qualifiers), len(near & p.own), p)
            for p in candidates
            if p.tool != own and p.qualifiers <= context and wanted <= p.words
        ),
        key=lambda s: (-s[0], -s[1], -s[2]),
    )
    if not scored:
        return None, False
    top = scored[0]
    rival = next((s for s in scored[1:] if s[3].tool != top[3].tool), None)
    if rival is not None and rival[:3] == top[:3]:
        return None, True
    return top[3], True


def _common(walked: Sequence[_Walked]) -> tuple[frozenset[str], frozenset[str]]:
    """Words in the texts of at least a quarter of the tools (``github``, ``slack``: no
    qualifier), and input names of at least a quarter (``owner``, ``repo``: what the user
    supplies, never a name only a tool reports; and in three tools at least). Ratios, so
    that a list and its renamed copies mostly give the same answer."""
    least = len(walked) / 4
    words: dict[str, int] = {}
    inputs: dict[str, int] = {}
    for wk in walked:
        t = wk.tool
        for w in {singular(w) for w in words_of(t.description or "")} | set(name_words(t.name)):
            words[w] = words.get(w, 0) + 1
        for name in wk.top_inputs:
            inputs[name] = inputs.get(name, 0) + 1
    return (
        frozenset(w for w, n in words.items() if n >= least),
        frozenset(w for w, n in inputs.items() if n >= least and n >= 3),
    )


def dataflow_evidence(
    tools: Sequence[ToolPlus], schemas: Sequence[Walked] | None = None
) -> list[Evidence]:
    """Every data-flow dependency (paper §6.4) of ``tools`` (the module docstring), once per
    (consumer, producer) pair, in tool order then input order; ``schemas`` are the tools'
    walked schemas when the caller has them (:func:`sim.calculus.schemas.walk`)."""
    if schemas is None:
        schemas = [walk(t.input_schema, t.output_schema) for t in tools]
    walked = [
        _Walked(t, w.inputs, w.outputs, w.top_inputs) for t, w in zip(tools, schemas, strict=True)
    ]
    spaces = namespaces([t.name for t in tools])
    index = _index(walked, spaces)
    common, supplied = _common(walked)
    outputs: dict[str, set[str]] = {}
    for w in walked:
        inputs = w.top_inputs
        for prop in w.outputs:
            if prop.top and prop.name not in inputs:
                outputs.setdefault(prop.name, set()).add(w.tool.name)
    found: dict[tuple[str, str], Evidence] = {}

    def add(t: ToolPlus, a: str, where: str, said: str, slot: str, source: str) -> None:
        ev = Evidence(t.name, a, t.name, where, quote_text(said), "dataflow", slot, source)
        found.setdefault((t.name, a), ev)

    for wk in walked:
        t = wk.tool
        ns = spaces[t.name]
        own_words = name_words(t.name)
        near = frozenset(singular(w) for w in own_words)
        made = name_object(own_words)
        creates = set()
        if made and made[2] in _MAKE_VERBS:
            creates.add(singular(made[1][-1]))  # create_repository makes the repository
        creates.update(_write_objects(own_words))
        desc_words = words_of(t.description or "")
        for prop in wk.inputs:
            if _OPTIONAL.search(prop.description):
                continue
            said = prop.description or prop.name
            where = f"{prop.path}.description" if prop.description else prop.path
            exact = outputs.get(prop.name, set()) - {t.name}
            if ns:  # B's namespace first, then the tools of none
                exact = {a for a in exact if spaces[a] == ns} or {a for a in exact if not spaces[a]}
            parts = name_words(prop.name)
            if prop.top and len(exact) == 1 and parts and parts[-1] in ID_WORDS:
                (a,) = exact
                add(t, a, where, said, prop.name, f"{a}'s output {prop.name!r}")
                continue
            prop_words = words_of(prop.description)
            words, by_name = referent(prop, prop_words)
            if not words or (by_name and prop.name in supplied):
                continue
            context = frozenset(singular(w) for w in (*own_words, *parts, *prop_words))
            # B may name what it creates; it cannot know the id of what it has yet to create
            made_by_b = creates if by_name else set()
            strict = words[-1] == "type" and parts[-1:] and parts[-1] in TYPE_WORDS
            best = _resolve(
                words, (index, ns), context, common, t.name, made_by_b, near, strict=bool(strict)
            )
            if best is not None:
                phrase = " ".join(words).lower()
                what = with_article(phrase)
                source = f"{what}, which only {best.tool} reports or creates ({best.said})"
                add(t, best.tool, where, said, prop.name, source)
        desc = t.description or ""
        first = _SENTENCE_END.split(desc, maxsplit=1)[0]
        stated = [*_EXISTS.finditer(desc), *_PENDING.finditer(first)]
        for m in stated:
            words = [w for w in words_of(m.group(1) or m.group(2)) if w.lower() not in ADJECTIVES]
            cut = next((i for i, w in enumerate(words) if w.lower() in STOP), len(words))
            words = words[:cut]
            if not words:
                continue
            made_here = creates | {singular(w) for w in _CREATED.findall(t.description or "")}
            context = frozenset(singular(w) for w in (*own_words, *desc_words))
            pools = (index, ns)
            best = _resolve(words, pools, context, common, t.name, made_here, near, creators=True)
            if best is not None:
                what = with_article(" ".join(words).lower())
                source = f"{what}, which {best.tool} creates ({best.said})"
                add(t, best.tool, "description", m.group(), "", source)
    return list(found.values())


def _resolve(
    words: Sequence[str],
    where: tuple[Index, str],
    context: frozenset[str],
    common: frozenset[str],
    own: str,
    creates: set[str],
    near: frozenset[str],
    *,
    creators: bool = False,
    strict: bool = False,
) -> _Producer | None:
    """The producer of the phrase ``words``: of its head noun, else (no candidate at all) of
    the word before it (``notification thread`` → notifications). Producers of B's own
    namespace first (:func:`namespaces`); a head with more than :data:`MAX_PRODUCERS`
    producers in a pool is no evidence (the bound that keeps lint linear)."""
    index, ns = where
    for k in range(len(words), 0 if not strict else len(words) - 1, -1):
        head = singular(words[k - 1])
        if head in creates:
            return None  # B makes it itself (create_repository's name)
        # a qualifier that is itself something a tool reports must match (a notification
        # thread is not a review thread); others (a parent message) need not
        wanted = qualifiers(words[: k - 1]) - common
        if not strict:  # strict (a type): every qualifier must match, no fallback
            wanted = wanted.intersection(index)
        # B's own namespace first, then the tools of none (all of them for B of none):
        # copies of a list under two prefixes never depend on each other
        pools = [index.get(f"{head}@{ns}", []), index.get(f"{head}@", [])] if ns else []
        pools = pools or [index.get(head, [])]
        for pool in pools:
            if len(pool) > MAX_PRODUCERS:
                return None
            candidates = [
                _Producer(p.tool, p.rank, _strip(p, common), p.said, p.words, p.own)
                for p in pool
                if not creators or p.rank == 2
            ]
            best, eligible = _best(candidates, context, wanted, own, near)
            if eligible:
                return best
    return None


def _strip(p: _Producer, common: frozenset[str]) -> frozenset[str]:
    """``p``'s qualifiers that restrict: a word of a quarter of the texts (``GitHub``) does
    not, unless the qualifier is in a name (``get_pull_request_files``: a pull request's)."""
    return p.qualifiers if p.said.startswith("its name") else p.qualifiers - common


def _write_objects(words: Sequence[str]) -> tuple[str, ...]:
    """The object of a ``*_write`` name (``label_write`` writes labels)."""
    return (singular(words[-2]),) if len(words) > 1 and words[-1] == "write" else ()

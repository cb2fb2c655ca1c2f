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

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sim.calculus.evidence import Evidence, quote_text
from sim.calculus.mcp import ToolPlus
from sim.calculus.schemas import Property, Walked, walk
from sim.calculus.writes import READ_VERBS, WRITE_VERBS, name_words

__all__ = ["LIST_VERBS", "dataflow_evidence", "singular"]

LIST_VERBS = frozenset(
    """
    list lists listing get gets search searches find finds read reads return returns
    retrieve retrieves fetch fetches show shows
    """.split()  # noqa: SIM905
)
"""Verbs whose object a tool reports."""
_REF_WORDS = frozenset(
    """
    id ids identifier identifiers uuid uuids timestamp timestamps ts sha sha1 slug slugs name
    names
    """.split()  # noqa: SIM905
)
"""The words without which a description cannot say what it refers to (a cheap test first)."""
_REF_NAMES = frozenset({"id", "ids", "uuid", "ts", "sha", "slug", "name", "names", "timestamp"})
_TYPE_WORDS = frozenset({"type", "types"})
_LEADING = frozenset({"the", "a", "an", "numeric", "unique"})
_CREATE_VERBS = frozenset({"create", "add", "insert", "new"})
_VERBS = READ_VERBS | WRITE_VERBS
MAX_PRODUCERS = 64
"""Most producers of one head noun that are compared for one input (beyond: ambiguous)."""
_MAKE_VERBS = frozenset({"create", "insert", "new"})  # add_sub_issue adds a link, not an issue
ID_WORDS = frozenset({"id", "ids", "uuid", "ts", "sha", "slug"})
"""Last words of an input's name that make it a reference (``gist_id``, ``thread_ts``)."""
_STOP = frozenset(
    """
    a an the all any each every their its your our this that these those in from for of
    on with by to across which who within between about using via as at per into than
    when where if matching including containing and or not only be is are against
    whose
    """.split()  # noqa: SIM905
)
_ADJECTIVES = frozenset(
    """
    recent new existing latest specific current available multiple public private detailed
    individual single given certain other likely unread pending own full entire
    """.split()  # noqa: SIM905
)
_DETERMINERS = frozenset({"a", "an", "the", "all", "any", "each", "every", "their", "its", "your"})
_TRANSPARENT = frozenset({"details", "information", "list", "contents", "set", "number"})
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*|[^\sA-Za-z0-9_-]")
_REF = r"(?:ids?|identifiers?|uuids?|timestamps?|ts|sha1?|slugs?|names?)"
_OF_FORM = re.compile(rf"\b{_REF}\s+of\s+([A-Za-z][\w\s-]{{0,60}})", re.IGNORECASE)
_PRE_FORM = re.compile(
    r"((?:[A-Za-z][\w-]*\s+){0,2}[A-Za-z][\w-]*)\s+(?:node\s+)?(?:ids?|uuid|slug|names)\b",
    re.IGNORECASE,
)
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
_RANK_WORDS = {4: "its name", 3: "its description", 2: "its name", 1: "its outputSchema"}


@functools.lru_cache(maxsize=1 << 16)
def singular(word: str) -> str:
    """``entities`` → ``entity``, ``branches`` → ``branch``, ``gists`` → ``gist``."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "ches", "shes", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def _plural(word: str) -> bool:
    return singular(word) != word.lower()


@dataclass(frozen=True, slots=True)
class _Producer:
    tool: str
    rank: int
    qualifiers: frozenset[str]  # the words before the head noun (singular)
    said: str  # what the producer's text says, quoted in the evidence
    words: frozenset[str] = frozenset()  # the tool's name words and the phrase (singular)
    own: frozenset[str] = frozenset()  # the tool's name words (singular)


def _phrases(text: str) -> Iterator[tuple[list[str], bool]]:
    """Noun phrases after a list verb, and whether after ``details of``, ``contents of``...
    (``Get the contents of a file`` reports one file: its head may be singular)."""
    toks = _TOKEN.findall(text)
    i, n = 0, len(toks)
    while i < n:
        if toks[i].lower() not in LIST_VERBS:
            i += 1
            continue
        i += 1
        phrase: list[str] = []
        of = False
        for _ in range(16):
            if i >= n:
                break
            tok, low = toks[i], toks[i].lower()
            if low in LIST_VERBS:
                break  # the outer loop starts the next list
            if tok == "," or low in ("and", "or"):
                if phrase:
                    yield phrase, of
                phrase = []
            elif low in _DETERMINERS and not phrase:
                pass  # "Get the contents of a file", "List all tables"
            elif not tok[0].isalpha() or (low in _STOP and low != "of"):
                break
            elif low == "of":
                if phrase and phrase[-1].lower() in _TRANSPARENT:
                    phrase, of = [], True
                else:
                    break
            elif low not in _ADJECTIVES:
                phrase.append(tok)
            i += 1
        if phrase:
            yield phrase, of


def _qualifiers(words: Iterable[str]) -> frozenset[str]:
    return frozenset(singular(w) for w in words if w.lower() not in _ADJECTIVES)


def _from_name(words: Sequence[str]) -> tuple[str, list[str], str] | None:
    """(verb kind, object words, verb) of a name with a list or create verb, else None."""
    for i, w in enumerate(words):
        if w in LIST_VERBS or w in _CREATE_VERBS:
            after = list(words[i + 1 :])
            cut = next((j for j, x in enumerate(after) if x in _STOP - {"or", "and"}), len(after))
            # add_comment_to_pending_review adds a comment; create_or_update_file a file
            obj = [x for x in after[:cut] if x not in ("or", "and")] or list(words[:i])
            kind = "list" if w in LIST_VERBS else "create"
            return (kind, obj, w) if obj else None
    return None


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
            got = _from_name(name_words(name))
            if got is None:
                continue
            kind, obj, _ = got
            head, quals = obj[-1], _qualifiers(obj[:-1])
            if kind == "list" and _plural(head):
                add(head, _Producer(t.name, 4, quals, f"its name {name!r}"))
            elif kind == "create" and name == t.name:
                add(head, _Producer(t.name, 2, quals, f"its name {name!r}"))
        for where, text in _texts(w):
            for phrase, of in _phrases(text):
                head = phrase[-1]
                if _plural(head) or of:
                    said = f'its {where} says "{quote_text(text)}"'
                    add(head, _Producer(t.name, 3, _qualifiers(phrase[:-1]), said))
        inputs = w.top_inputs
        for prop in w.outputs:
            if prop.top and prop.name not in inputs and _plural(prop.name):
                add(prop.name, _Producer(t.name, 1, frozenset(), f"its output {prop.name!r}"))
    return index


def _texts(w: _Walked) -> Iterator[tuple[str, str]]:
    if w.tool.description:
        yield "description", w.tool.description
    for prop in w.inputs:
        if prop.description:
            yield f"{prop.path}.description", prop.description


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z0-9]+", text)]


def _referent(prop: Property, desc_words: Sequence[str]) -> tuple[list[str], bool]:
    """The words of what ``prop`` refers to (see the module docstring), and whether by
    name (``name of the table``) rather than by an id; ``[]`` when it refers to nothing."""
    desc = prop.description
    parts = name_words(prop.name)
    named = bool(parts) and parts[-1] in _REF_NAMES  # gist_id, entityName, names
    said = {w.lower() for w in desc_words}
    forms = (_OF_FORM, _PRE_FORM) if not said.isdisjoint(_REF_WORDS) else ()
    for form in forms:
        m = form.search(desc)
        if m is None:
            continue
        lead = [w for w in _words(desc[: m.start()]) if w.lower() not in _LEADING]
        if lead and not named:
            continue  # "The search query to match against entity names": not a reference
        by_name = bool(re.search(r"\bnames?\b", m.group(), re.IGNORECASE))
        words = [w for w in _words(m.group(1)) if w.lower() not in _ADJECTIVES]
        if form is _OF_FORM:
            while words and words[0].lower() in _STOP:
                words.pop(0)
            cut = next(  # a function word or a participle ends the noun phrase
                (
                    i
                    for i, w in enumerate(words)
                    if w.lower() in _STOP - {"and", "or"} or _verbal(w)
                ),
                len(words),
            )
            words = [w for w in words[:cut] if w.lower() not in ("and", "or")][-4:]
        else:
            start = max((i + 1 for i, w in enumerate(words) if w.lower() in _STOP), default=0)
            words = words[start:]
        if words:
            return words, by_name
    if len(parts) > 1 and parts[-1] in ID_WORDS:
        return [w for w in parts[:-1] if w != "node"], False
    if len(parts) > 1 and parts[-1] in _TYPE_WORDS:
        return [*parts[:-1], "type"], False  # issue_type: one of the issue types listed
    return [], False


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
        for w in {singular(w) for w in _words(t.description or "")} | set(name_words(t.name)):
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
        made = _from_name(own_words)
        creates = set()
        if made and made[2] in _MAKE_VERBS:
            creates.add(singular(made[1][-1]))  # create_repository makes the repository
        creates.update(_write_objects(own_words))
        desc_words = _words(t.description or "")
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
            prop_words = _words(prop.description)
            words, by_name = _referent(prop, prop_words)
            if not words or (by_name and prop.name in supplied):
                continue
            context = frozenset(singular(w) for w in (*own_words, *parts, *prop_words))
            # B may name what it creates; it cannot know the id of what it has yet to create
            made_by_b = creates if by_name else set()
            strict = words[-1] == "type" and parts[-1:] and parts[-1] in _TYPE_WORDS
            best = _resolve(
                words, (index, ns), context, common, t.name, made_by_b, near, strict=bool(strict)
            )
            if best is not None:
                phrase = " ".join(words).lower()
                source = f"{_a(phrase)}, which only {best.tool} reports or creates ({best.said})"
                add(t, best.tool, where, said, prop.name, source)
        desc = t.description or ""
        first = _SENTENCE_END.split(desc, maxsplit=1)[0]
        stated = [*_EXISTS.finditer(desc), *_PENDING.finditer(first)]
        for m in stated:
            words = [w for w in _words(m.group(1) or m.group(2)) if w.lower() not in _ADJECTIVES]
            cut = next((i for i, w in enumerate(words) if w.lower() in _STOP), len(words))
            words = words[:cut]
            if not words:
                continue
            made_here = creates | {singular(w) for w in _CREATED.findall(t.description or "")}
            context = frozenset(singular(w) for w in (*own_words, *desc_words))
            pools = (index, ns)
            best = _resolve(words, pools, context, common, t.name, made_here, near, creators=True)
            if best is not None:
                what = _a(" ".join(words).lower())
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
        wanted = _qualifiers(words[: k - 1]) - common
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


def _verbal(word: str) -> bool:
    """A participle or ``being`` (``the file being replaced``, ``the branch created``)."""
    w = word.lower()
    return w == "being" or (len(w) > 4 and w.endswith(("ing", "ed")) and w not in _ED_NOUNS)


_ED_NOUNS = frozenset({"feed", "seed", "need", "speed", "thing", "string", "ring", "king"})


def _a(phrase: str) -> str:
    """``phrase`` with its indefinite article: ``an event``, ``a channel``."""
    return f"{'an' if phrase[:1] in 'aeiou' else 'a'} {phrase}"


def _strip(p: _Producer, common: frozenset[str]) -> frozenset[str]:
    """``p``'s qualifiers that restrict: a word of a quarter of the texts (``GitHub``) does
    not, unless the qualifier is in a name (``get_pull_request_files``: a pull request's)."""
    return p.qualifiers if p.said.startswith("its name") else p.qualifiers - common


def _write_objects(words: Sequence[str]) -> tuple[str, ...]:
    """The object of a ``*_write`` name (``label_write`` writes labels)."""
    return (singular(words[-2]),) if len(words) > 1 and words[-1] == "write" else ()

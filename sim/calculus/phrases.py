"""Noun phrases of tool names and descriptions, for the data-flow rules of P4 (paper §6.4,
:mod:`sim.calculus.dataflow`): what a tool lists (the object of a list verb), what an input
refers to (``The ID of the channel``, ``gist_id``), singular forms, articles.

Words, no model: a phrase is the run of words after a list verb up to a function word, a
participle or a punctuation mark (``Get recent messages from a channel`` → recent messages;
adjectives such as *recent* are dropped). Time is linear in the length of the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence

from sim.calculus.schemas import Property
from sim.calculus.writes import name_words

__all__ = [
    "ADJECTIVES",
    "CREATE_VERBS",
    "ID_WORDS",
    "LIST_VERBS",
    "REF_NAMES",
    "REF_WORDS",
    "STOP",
    "TYPE_WORDS",
    "list_phrases",
    "name_object",
    "plural",
    "qualifiers",
    "referent",
    "singular",
    "with_article",
    "words_of",
]

LIST_VERBS = frozenset(
    """
    list lists listing get gets search searches find finds read reads return returns
    retrieve retrieves fetch fetches show shows
    """.split()  # noqa: SIM905
)
"""Verbs whose object a tool reports."""
REF_WORDS = frozenset(
    """
    id ids identifier identifiers uuid uuids timestamp timestamps ts sha sha1 slug slugs name
    names
    """.split()  # noqa: SIM905
)
"""The words without which a description cannot say what it refers to (a cheap test first)."""
REF_NAMES = frozenset({"id", "ids", "uuid", "ts", "sha", "slug", "name", "names", "timestamp"})
TYPE_WORDS = frozenset({"type", "types"})
_LEADING = frozenset({"the", "a", "an", "numeric", "unique"})
CREATE_VERBS = frozenset({"create", "add", "insert", "new"})
ID_WORDS = frozenset({"id", "ids", "uuid", "ts", "sha", "slug"})
"""Last words of an input's name that make it a reference (``gist_id``, ``thread_ts``)."""
STOP = frozenset(
    """
    a an the all any each every their its your our this that these those in from for of
    on with by to across which who within between about using via as at per into than
    when where if matching including containing and or not only be is are against
    whose
    """.split()  # noqa: SIM905
)
ADJECTIVES = frozenset(
    """
    recent new existing latest specific current available multiple public private detailed
    individual single given certain other likely unread pending own full entire
    """.split()  # noqa: SIM905
)
_DETERMINERS = frozenset({"a", "an", "the", "all", "any", "each", "every", "their", "its", "your"})
_TRANSPARENT = frozenset({"details", "information", "list", "contents", "set", "number"})
_ALNUM = re.compile(r"[A-Za-z0-9]+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*|[^\sA-Za-z0-9_-]")
_REF = r"(?:ids?|identifiers?|uuids?|timestamps?|ts|sha1?|slugs?|names?)"
_OF_FORM = re.compile(rf"\b{_REF}\s+of\s+([A-Za-z][\w\s-]{{0,60}})", re.IGNORECASE)
_PRE_FORM = re.compile(
    r"((?:[A-Za-z][\w-]*\s+){0,2}[A-Za-z][\w-]*)\s+(?:node\s+)?(?:ids?|uuid|slug|names)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1 << 16)
def singular(word: str) -> str:
    """The singular of a noun (paper §6.4 data flow): ``entities`` → ``entity``, ``branches``
    → ``branch``, ``gists`` → ``gist``; lower-cased."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "ches", "shes", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def plural(word: str) -> bool:
    """Whether ``word`` is a plural noun (what a list reports, paper §6.4)."""
    return singular(word) != word.lower()


def list_phrases(text: str) -> Iterator[tuple[list[str], bool]]:
    """Noun phrases after a list verb (what a tool reports, paper §6.4), and whether after
    ``details of``, ``contents of``...
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
            elif not tok[0].isalpha() or (low in STOP and low != "of"):
                break
            elif low == "of":
                if phrase and phrase[-1].lower() in _TRANSPARENT:
                    phrase, of = [], True
                else:
                    break
            elif low not in ADJECTIVES:
                phrase.append(tok)
            i += 1
        if phrase:
            yield phrase, of


def qualifiers(words: Iterable[str]) -> frozenset[str]:
    """The words before a head noun that restrict it, singular, adjectives dropped (§6.4)."""
    return frozenset(singular(w) for w in words if w.lower() not in ADJECTIVES)


def name_object(words: Sequence[str]) -> tuple[str, list[str], str] | None:
    """``(kind, object words, verb)`` of a name with a list or create verb (paper §6.4),
    ``kind`` ``list`` or ``create``; the object ends at a preposition; else None."""
    for i, w in enumerate(words):
        if w in LIST_VERBS or w in CREATE_VERBS:
            after = list(words[i + 1 :])
            cut = next((j for j, x in enumerate(after) if x in STOP - {"or", "and"}), len(after))
            # add_comment_to_pending_review adds a comment; create_or_update_file a file
            obj = [x for x in after[:cut] if x not in ("or", "and")] or list(words[:i])
            kind = "list" if w in LIST_VERBS else "create"
            return (kind, obj, w) if obj else None
    return None


def words_of(text: str) -> list[str]:
    """The runs of letters and digits of ``text`` (paper §6.4), case kept."""
    return _ALNUM.findall(text)


def referent(prop: Property, desc_words: Sequence[str]) -> tuple[list[str], bool]:
    """The words of what input ``prop`` refers to (paper §6.4, the module docstring of
    :mod:`sim.calculus.dataflow`), and whether by name (``name of the table``) rather than
    by an id; ``[]`` when it refers to nothing. ``desc_words``: its description's words."""
    desc = prop.description
    parts = name_words(prop.name)
    named = bool(parts) and parts[-1] in REF_NAMES  # gist_id, entityName, names
    said = {w.lower() for w in desc_words}
    forms = (_OF_FORM, _PRE_FORM) if not said.isdisjoint(REF_WORDS) else ()
    for form in forms:
        m = form.search(desc)
        if m is None:
            continue
        lead = [w for w in words_of(desc[: m.start()]) if w.lower() not in _LEADING]
        if lead and not named:
            continue  # "The search query to match against entity names": not a reference
        by_name = bool(re.search(r"\bnames?\b", m.group(), re.IGNORECASE))
        words = [w for w in words_of(m.group(1)) if w.lower() not in ADJECTIVES]
        if form is _OF_FORM:
            while words and words[0].lower() in STOP:
                words.pop(0)
            cut = next(  # a function word or a participle ends the noun phrase
                (i for i, w in enumerate(words) if w.lower() in STOP - {"and", "or"} or _verbal(w)),
                len(words),
            )
            words = [w for w in words[:cut] if w.lower() not in ("and", "or")][-4:]
        else:
            start = max((i + 1 for i, w in enumerate(words) if w.lower() in STOP), default=0)
            words = words[start:]
        if words:
            return words, by_name
    if len(parts) > 1 and parts[-1] in ID_WORDS:
        return [w for w in parts[:-1] if w != "node"], False
    if len(parts) > 1 and parts[-1] in TYPE_WORDS:
        return [*parts[:-1], "type"], False  # issue_type: one of the issue types listed
    return [], False


def _verbal(word: str) -> bool:
    """A participle or ``being`` (``the file being replaced``, ``the branch created``)."""
    w = word.lower()
    return w == "being" or (len(w) > 4 and w.endswith(("ing", "ed")) and w not in _ED_NOUNS)


_ED_NOUNS = frozenset({"feed", "seed", "need", "speed", "thing", "string", "ring", "king"})


def with_article(phrase: str) -> str:
    """``phrase`` with its indefinite article, for the evidence of P4 (paper §6.4): ``an
    event``, ``a channel``."""
    return f"{'an' if phrase[:1] in 'aeiou' else 'a'} {phrase}"

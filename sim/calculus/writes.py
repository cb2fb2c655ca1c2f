"""Evidence that a tool writes, from its name, description and arguments (paper §6.2, P2).

A tool *looks like a write* when

- the first verb of its name is a write verb (:data:`WRITE_VERBS`: ``create``, ``post``,
  ``commit``...: ``slack_post_message``, ``sqlite_write_query``), not a read verb
  (:data:`READ_VERBS`: ``get_commit`` reads a commit, ``pull_request_read`` reads a pull
  request, :data:`NOUN_PAIRS`); the name's words are its ``_``/``-``/camelCase parts, a
  service prefix (``slack_``) being a word that is no verb;
- or the first word of its description is one (``Records changes``, ``Adds file contents``,
  a third-person ``-s``/``-es`` dropped);
- or it has an argument that only a write has (:data:`WRITE_FLAGS`: ``overwrite``), or one
  that is code or a command it runs (:data:`CODE_ARGS`: ``script``, ``command``: what it runs
  may write anything).

Arguments that carry what would be written (:data:`PAYLOAD_ARGS`: ``content``, ``body``,
``text``, ``message``...) are quoted beside a verb as supporting evidence, never alone. A
description that says the tool only reads (``read-only``, ``does not modify``) is
:attr:`WriteEvidence.reads`. ``toggle``, ``run``, ``execute``, ``click`` are not write verbs:
a toggle of the session, a ``SELECT`` run, a click on a page change nothing that outlives
the session by themselves. Time is linear in the length of the texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sim.calculus.mcp import ToolPlus
from sim.calculus.schemas import Property, properties

__all__ = [
    "CODE_ARGS",
    "NOUN_PAIRS",
    "PAYLOAD_ARGS",
    "READ_VERBS",
    "WRITE_FLAGS",
    "WRITE_VERBS",
    "WriteEvidence",
    "name_verb",
    "name_words",
    "write_evidence",
]

WRITE_VERBS = frozenset(
    """
    create write update delete remove add insert post send reply push merge commit edit
    modify set move rename upload publish assign unassign close reopen approve dismiss
    fork star unstar submit save append record reset checkout drop truncate alter replace
    overwrite patch put mark resolve unresolve request trigger cancel rerun archive
    unarchive lock unlock pin unpin invite transfer schedule book purchase pay register
    subscribe unsubscribe react reprioritize manage stage unstage revert rebase tag label
    comment install uninstall enable disable grant revoke share import deploy restore
    """.split()  # noqa: SIM905
)
"""Verbs whose object is changed, created or destroyed by the call."""
READ_VERBS = frozenset(
    """
    get list search read find fetch show describe query view open download poll convert
    lookup look check count inspect explain diff preview validate calculate compute
    retrieve browse echo
    """.split()  # noqa: SIM905
)
"""Verbs of a name that only reads (``get_commit``: ``commit`` is its object)."""
WRITE_FLAGS = frozenset({"overwrite"})
CODE_ARGS = frozenset({"script", "code", "command", "cmd", "shell"})
"""Argument names of code or a command the tool runs (a query language is not among them:
``read_query``'s ``query`` is a ``SELECT``)."""
"""Argument names that only a writing tool has."""
PAYLOAD_ARGS = frozenset(
    {"content", "contents", "body", "text", "message", "data", "files", "edits", "patch"}
)
"""Argument names of what a write would store (supporting evidence beside a verb)."""

NOUN_PAIRS = frozenset({("pull", "request"), ("merge", "request"), ("feature", "request")})
"""Two words that are one noun, though the first or second is a verb alone."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[_\-\s./]+")
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_READS = re.compile(
    r"\bread[- ]only\b|\bdoes\s+not\s+(?:modify|change|write)\b|\bwithout\s+modifying\b|"
    r"\bno\s+side[- ]effects\b",
    re.IGNORECASE,
)


def name_words(name: str) -> list[str]:
    """The lower-cased words of an identifier (paper §6.2, §6.4): ``slack_post_message`` →
    slack, post, message; ``commentNodeID`` → comment, node, id."""
    return [w.lower() for w in _SPLIT.split(_CAMEL.sub(" ", name)) if w]


def name_verb(name: str) -> str:
    """The first verb of a name (P2, paper §6.2), read or write: ``sqlite_write_query`` →
    write, ``pull_request_read`` → read (a *pull request* is a noun, :data:`NOUN_PAIRS`);
    ``""`` when it has none."""
    words = name_words(name)
    for i, w in enumerate(words):
        if i + 1 < len(words) and (w, words[i + 1]) in NOUN_PAIRS:
            continue
        if i > 0 and (words[i - 1], w) in NOUN_PAIRS:
            continue
        if w in READ_VERBS or w in WRITE_VERBS:
            return w
    return ""


def _verb(word: str) -> str | None:
    """``word`` as a write verb (``adds`` → ``add``, ``pushes`` → ``push``), else None."""
    stems = [word]
    if word.endswith("s"):
        stems.append(word[:-1])
        if word.endswith("es"):
            stems.append(word[:-2])
    return next((s for s in stems if s in WRITE_VERBS), None)


@dataclass(frozen=True, slots=True)
class WriteEvidence:
    """What a tool's texts say about writing (P2, paper §6.2): the write verbs found (where:
    ``name``, ``description``), the write flags, the payload arguments, and whether the
    description says it only reads (``reads``)."""

    verbs: tuple[tuple[str, str], ...]
    flags: tuple[str, ...]
    payload: tuple[str, ...]
    reads: str

    @property
    def writes(self) -> bool:
        """True when the texts give evidence of a write (a verb or a write flag)."""
        return bool(self.verbs or self.flags) and not self.reads

    def describe(self) -> str:
        """The evidence in words: ``verb 'post' in the name; arguments text``."""
        parts = [f"verb {v!r} in the {where}" for v, where in self.verbs]
        parts += [
            f"argument {f!r} ("
            + (
                "code it runs can write anything"
                if f.lower() in CODE_ARGS
                else "only a write has it"
            )
            + ")"
            for f in self.flags
        ]
        if parts and self.payload:
            args = ", ".join(self.payload)
            many = len(self.payload) > 1
            parts.append(
                f"argument{'s' if many else ''} {args} carr{'y' if many else 'ies'} what it "
                "would store"
            )
        return "; ".join(parts)


def write_evidence(tool: ToolPlus, inputs: Sequence[Property] | None = None) -> WriteEvidence:
    """The :class:`WriteEvidence` of ``tool`` (paper §6.2, the module docstring); ``inputs``
    are its walked input properties when the caller has them."""
    verbs: list[tuple[str, str]] = []
    verb = name_verb(tool.name)
    if verb in WRITE_VERBS:
        verbs.append((verb, "name"))
    desc = tool.description or ""
    first = _FIRST_WORD.search(desc)
    if first and (v := _verb(first.group().lower())) and (v, "name") not in verbs:
        verbs.append((v, "description"))
    if inputs is None:
        inputs = properties(tool.input_schema, "inputSchema")
    names = [p.name for p in inputs if p.top]
    flags = tuple(n for n in names if n.lower() in WRITE_FLAGS or n.lower() in CODE_ARGS)
    payload = tuple(n for n in names if n.lower() in PAYLOAD_ARGS)
    reads = m.group() if (m := _READS.search(desc)) else ""
    return WriteEvidence(tuple(verbs), flags, payload, reads)

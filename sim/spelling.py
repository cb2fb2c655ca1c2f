"""Name suggestions: the one ``did you mean`` of every layer (a leaf, imports nothing of ours).

The scenario rules suggest a declared name, the mesh a router's, the command line a
subcommand's; all through :func:`did_you_mean`, so one misspelling gets one hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(str(word), sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""

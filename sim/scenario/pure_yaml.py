"""PyYAML's pure-Python loader, its bookkeeping of simple keys linear in flow depth.

PyYAML's scanner keeps one possible simple key per open flow level and walks them all
before each token (to drop the stale ones, to find the nearest): on ``[[[[…`` that is
quadratic in the depth it reaches (2 s for a 5,000-deep file, which libyaml refuses, so
that PyYAML's words are tried). The keys are kept in increasing level, position and
token order (a key is saved at the deepest open level only; closing a level removes its
key), so the stale ones are a prefix and the nearest is the first: this loader looks at
that prefix only. Its tokens, events, nodes and errors are PyYAML's.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import yaml
from yaml.scanner import ScannerError

#: How far (in characters) a simple key may run before ``:`` (PyYAML's and YAML's bound).
_SIMPLE_KEY_LENGTH = 1024


class PureSafeLoader(yaml.SafeLoader):
    """:class:`yaml.SafeLoader`, linear in the depth of flow collections."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        # first key in O(1), also once keys in front of it were removed (a dict scans them)
        self.possible_simple_keys = OrderedDict()

    def next_possible_simple_key(self) -> int | None:
        """The token number of the nearest possible simple key (the first one kept)."""
        for key in self.possible_simple_keys.values():
            return int(key.token_number)
        return None

    def stale_possible_simple_keys(self) -> None:
        """Drop the keys no longer possible (another line, too far): a prefix of them."""
        keys = self.possible_simple_keys
        while keys:
            level = next(iter(keys))
            key = keys[level]
            if key.line == self.line and self.index - key.index <= _SIMPLE_KEY_LENGTH:
                return
            if key.required:
                raise ScannerError(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'",
                    self.get_mark(),
                )
            del keys[level]

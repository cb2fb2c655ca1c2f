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

import re
from collections import OrderedDict
from typing import Any, TypeVar

import yaml
from yaml.scanner import ScannerError

#: How far (in characters) a simple key may run before ``:`` (PyYAML's and YAML's bound).
_SIMPLE_KEY_LENGTH = 1024

FLOAT_TAG = "tag:yaml.org,2002:float"
#: A float with an exponent, as YAML 1.2's core schema (and JSON) reads one: ``1e12``,
#: ``2E-3``, ``1.5e3``. PyYAML's YAML 1.1 resolver wants a dot and a signed exponent, and
#: reads these as strings; its own floats (``1.0e+3``) match too, harmlessly.
EXPONENT_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+")

_Loader = TypeVar("_Loader", bound=type[Any])


def with_exponent_floats(loader: _Loader) -> _Loader:
    """``loader`` resolving a plain (unquoted) exponent scalar as a float, as YAML 1.2
    does; a quoted one stays a string. PyYAML copies the resolvers into the class that
    adds one, so the loader it derives from is unchanged."""
    pattern = re.compile(f"^(?:{EXPONENT_FLOAT.pattern})$")
    loader.add_implicit_resolver(FLOAT_TAG, pattern, list("-+0123456789."))
    return loader


@with_exponent_floats
class PureSafeLoader(yaml.SafeLoader):
    """:class:`yaml.SafeLoader`, linear in the depth of flow collections, reading
    ``1e12`` as a float (:func:`with_exponent_floats`)."""

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

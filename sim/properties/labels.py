"""The trace labels a formula may name, each with its detail keys (SPEC §5), derived from
the one trace vocabulary, :mod:`sim.vocabulary`."""

from __future__ import annotations

from collections.abc import Mapping

from sim.vocabulary import LABELS

#: label → the detail keys its events may carry
LABEL_KEYS: Mapping[str, frozenset[str]] = {
    name: frozenset(label.key_names) for name, label in LABELS.items()
}

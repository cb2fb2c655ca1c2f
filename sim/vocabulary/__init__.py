"""The trace vocabulary of SPEC §5: labels, their detail keys and types, the line's fields.

A leaf package (it imports nothing of protomesh outside itself): the engine's recorder
and the conformance decoders are both derived from it. See :mod:`sim.vocabulary.labels`;
:func:`line_problems` says how a decoded line departs from it.
"""

from sim.vocabulary.labels import (
    DENIALS,
    DETAIL_KEYS,
    FIELD_NAMES,
    FIELDS,
    LABEL_NAMES,
    LABELS,
    PROTOCOL_LABELS,
    SCOPES,
    STRINGS,
    TRACE_LEVELS,
    TRANSPORT_LABELS,
    WALL_FORMAT,
    Field,
    Key,
    Label,
    detail_type,
)
from sim.vocabulary.lines import has_type, line_problems

__all__ = [
    "DENIALS",
    "DETAIL_KEYS",
    "FIELDS",
    "FIELD_NAMES",
    "LABELS",
    "LABEL_NAMES",
    "PROTOCOL_LABELS",
    "SCOPES",
    "STRINGS",
    "TRACE_LEVELS",
    "TRANSPORT_LABELS",
    "WALL_FORMAT",
    "Field",
    "Key",
    "Label",
    "detail_type",
    "has_type",
    "line_problems",
]

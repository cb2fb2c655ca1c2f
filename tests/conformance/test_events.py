"""The conformance decoders are derived from the one trace vocabulary (sim.vocabulary):
every declared label is decoded, every detail key the checks read is declared, and
every field's type check follows its declared type, on the typed decode and on the
read of a line it refused (both msgspec's ``MEvent``)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from sim.conformance import events
from sim.conformance.checks import Context, run_pass
from sim.vocabulary import FIELDS, LABEL_NAMES, LABELS, PROTOCOL_LABELS, STRINGS

CHECKS = Path(__file__).resolve().parents[2] / "sim" / "conformance" / "checks"

GOOD: dict[Any, Any] = {int: 3, float: 1.5, str: "s", bool: True}
BAD: dict[Any, Any] = {int: "3", float: "1.5", str: 5, bool: 1}


def _good(declared: object) -> Any:
    return ["a", "b"] if declared == STRINGS else GOOD[declared]


def _bad(declared: object) -> Any:
    return "a" if declared == STRINGS else BAD[declared]


def _full_line(name: str) -> dict[str, Any]:
    """A line of label ``name`` with every field and every declared detail key set."""
    line: dict[str, Any] = {f.name: _good(f.type) for f in FIELDS if f.name != "detail"}
    line["label"] = name
    line["detail"] = {k.name: _good(k.type) for k in LABELS[name].keys}
    return line


def _refused(raw: bytes) -> Any:
    """A line read the way the pass reads one the typed decode refused (a ``null``
    detail, a scenario's name the interning decoder does not know)."""
    return events.decode_line(raw, "t", 4, _refuse)


def _refuse(raw: bytes) -> Any:
    raise ValueError("refused")


DECODERS = [events.decoder(), _refused]


def test_the_label_sets_are_the_vocabulary_s() -> None:
    assert frozenset(LABEL_NAMES) == events.LABELS
    assert events.PROTOCOL_LABELS == PROTOCOL_LABELS
    assert [events.LABEL_IDS[n] for n in LABEL_NAMES] == list(range(len(LABEL_NAMES)))


@pytest.mark.parametrize("decode", DECODERS, ids=["typed", "refused"])
@pytest.mark.parametrize("name", LABEL_NAMES)
def test_every_declared_label_is_decoded_with_its_declared_keys(decode: Any, name: str) -> None:
    line = _full_line(name)
    ev = decode(json.dumps(line).encode())
    assert ev.label == name
    for f in FIELDS:
        if f.name != "detail":
            assert getattr(ev, f.name) == line[f.name], f.name
    declared = {k.name for k in LABELS[name].keys}
    for key in events.READ_KEYS:
        want = line["detail"][key] if key in declared else None
        assert getattr(ev.detail, events.attribute(key)) == want, key


def test_every_declared_label_passes_the_stream() -> None:
    lines = []
    for seq, name in enumerate(LABEL_NAMES):
        line = _full_line(name)
        line.update(seq=seq, t=float(seq))
        lines.append(json.dumps(line).encode())
    counts = run_pass("t", [lines], [], Context(), ordered=True)
    assert counts == dict.fromkeys(LABEL_NAMES, 1)


def test_every_key_the_checks_read_is_declared() -> None:
    declared = {k.name for lab in LABELS.values() for k in lab.keys}
    assert set(events.READ_KEYS) <= declared
    read: set[str] = set()
    for path in CHECKS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        details = {"d"}  # the checks' name for ``ev.detail``
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            base = node.value
            if (isinstance(base, ast.Attribute) and base.attr == "detail") or (
                isinstance(base, ast.Name) and base.id in details
            ):
                read.add(node.attr)
    assert read, "no detail key read: the scan is broken"
    assert read <= set(events.DETAIL_ATTRS), read - set(events.DETAIL_ATTRS)


FIELD_CASES = [(f.name, f.type) for f in FIELDS if f.name not in ("detail", "label")]
KEY_CASES = [(k, events._DETAIL[i][2]) for i, k in enumerate(events.READ_KEYS)]


@pytest.mark.parametrize("decode", DECODERS, ids=["typed", "refused"])
@pytest.mark.parametrize(
    ("name", "declared"), FIELD_CASES + [(f"detail.{k}", t) for k, t in KEY_CASES]
)
def test_a_value_of_the_wrong_type_is_rejected_naming_its_field(
    decode: Any, name: str, declared: object
) -> None:
    line: dict[str, Any] = {"t": 1.0, "seq": 1, "label": "hop", "detail": {}}
    if name.startswith("detail."):
        line["detail"][name[len("detail.") :]] = _bad(declared)
    else:
        line[name] = _bad(declared)
    raw = json.dumps(line).encode()
    with pytest.raises((TypeError, ValueError)):  # msgspec.ValidationError, TypeError
        decode(raw)
    with pytest.raises(events.TraceError, match=f"t:4: not a trace event: `{name}` must be"):
        events.decode_line(raw, "t", 4, decode)

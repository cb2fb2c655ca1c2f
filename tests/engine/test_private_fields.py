"""No engine module reads or writes another object's private fields (``x._name`` with
``x`` not ``self``): the transport wrote the recorder's clock and buffer (issue 34 item
6); it calls :meth:`~sim.engine.recorder.Recorder.send` now. SimPy's private attributes,
used on the hot path under a pinned SimPy (``tests/engine/test_compiled.py``), are the
one exception."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "sim" / "engine"

#: SimPy's private attributes the engine reads on its hot path (its clock, its event
#: heap and insertion counter, an event's value and outcome).
SIMPY_PRIVATE = frozenset({"_now", "_queue", "_eid", "_value", "_ok"})


def foreign_private(source: str) -> list[str]:
    """``LINE: EXPR`` for each private attribute of something other than ``self`` or
    ``cls`` in ``source`` (dunders and :data:`SIMPY_PRIVATE` aside), in source order."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") or node.attr in SIMPY_PRIVATE:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append((node.lineno, node.col_offset, f"{node.lineno}: {ast.unparse(node)}"))
    return [text for *_, text in sorted(found)]


def test_no_engine_module_touches_another_objects_private_fields() -> None:
    offenders = {
        path.name: found
        for path in sorted(ENGINE.glob("*.py"))
        if (found := foreign_private(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_a_foreign_private_field_is_named() -> None:
    source = (
        "rec = self.rec\n"
        "rec._buffer.append(line)\n"
        "self._ok = env._now\n"
        "self.rec._tick(t).__len__()\n"
    )
    assert foreign_private(source) == ["2: rec._buffer", "4: self.rec._tick"]

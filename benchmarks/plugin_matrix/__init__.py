"""The fuzzer's plug-in matrix (issue 38, item 11): router and approval-policy plug-ins that
misbehave in one hook each, in every way a plug-in's code can that protomesh must turn
into the plug-in's located error (``sim.mesh.isolation``, ``sim.approval``).

Each class is ``<Fault>In<Hook>``: the hook (``EdgeCost``, ``TranslationCost``, ``Route``,
``Serve``, ``Suspects``, ``Init``, ``Ask``) calls ``sys.exit(3)`` (``Exit``), raises
``KeyboardInterrupt`` (``Interrupt``) or ``RuntimeError`` (``Raise``), or answers a wrong
value (``Wrong``: a string for a cost, None for a route, 42 for a served route, ``"x"``
for suspects, ``"yes"`` for ask); ``StaticText`` has ``static = "yes"``. Three modules
misbehave while they are imported: ``exits_at_import``, ``interrupts_at_import`` and
``raises_at_import``. ``os._exit`` is left out: nothing in the process can catch it, and
the fuzzer judges mutants in its own process (docs/reference/routing.md).
:data:`REFERENCES` lists every ``module:Class``.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

from sim import ApprovalPolicy, DijkstraRouter

#: the faults, by name, and what each hook answers when the fault is ``Wrong``
FAULTS = ("Exit", "Interrupt", "Raise", "Wrong")
WRONG: dict[str, Any] = {
    "edge_cost": "cheap",
    "translation_cost": float("nan"),
    "route": None,
    "serve": 42,
    "suspects": "x",
    "ask": "yes",
}


def fail(fault: str) -> NoReturn:
    """Misbehave as ``fault`` says (``Exit``, ``Interrupt`` or ``Raise``)."""
    if fault == "Exit":
        sys.exit(3)
    if fault == "Interrupt":
        raise KeyboardInterrupt
    raise RuntimeError("fuzz: the plug-in raised")


def _hook(hook: str, fault: str) -> Any:
    def misbehave(self: Any, *args: Any, **kwargs: Any) -> Any:
        if fault == "Wrong":
            return WRONG[hook]
        fail(fault)

    return misbehave


def _init(fault: str) -> Any:
    def __init__(self: Any, graph: Any) -> None:
        fail(fault)

    return __init__


def _camel(hook: str) -> str:
    return "".join(part.title() for part in hook.split("_"))


REFERENCES: list[str] = []
for _name, _base, _hooks in (
    ("router", DijkstraRouter, ("edge_cost", "translation_cost", "route", "serve", "suspects")),
    ("policy", ApprovalPolicy, ("ask",)),
):
    for _hook_name in _hooks:
        for _fault in FAULTS:
            _cls = type(
                f"{_fault}In{_camel(_hook_name)}",
                (_base,),
                {
                    _hook_name: _hook(_hook_name, _fault),
                    "static": _hook_name != "suspects",
                    "__module__": __name__,
                },
            )
            globals()[_cls.__name__] = _cls
            REFERENCES.append(f"{__name__}:{_cls.__name__}")
for _fault in FAULTS[:3]:
    _cls = type(
        f"{_fault}InInit", (DijkstraRouter,), {"__init__": _init(_fault), "__module__": __name__}
    )
    globals()[_cls.__name__] = _cls
    REFERENCES.append(f"{__name__}:{_cls.__name__}")


class StaticText(DijkstraRouter):
    """``static`` is not a bool."""

    static = "yes"  # type: ignore[assignment]


REFERENCES += [f"{__name__}:StaticText"] + [
    f"{__name__}.{module}:Router"
    for module in ("exits_at_import", "interrupts_at_import", "raises_at_import")
]

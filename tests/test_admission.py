"""sim.admission: the rules of the layers above the scenario run in the loader's pass.

The scenario layer alone cannot tell a router or approval-policy class (it never imports
the mesh or sim.approval); loading through sim.admission, as every command does, gives
the located error of the layer that owns the base class, among the scenario's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim import admission
from sim.scenario import ScenarioError, parse_scenario

BASE = (Path(__file__).resolve().parents[1] / "scenarios" / "live_small.yaml").read_text(
    encoding="utf-8"
)
BAD_ROUTER = BASE.replace(
    "routers: [dijkstra, resilient]\n",
    'routers:\n  - dijkstra\n  - {name: mine, plugin: "sim.mesh.route:Route"}\n',
)
BAD_POLICY = BASE.replace("approval:\n", 'approval:\n  policy: {plugin: "sim.mesh.route:Route"}\n')


def test_the_scenario_layer_alone_does_not_check_plugin_classes() -> None:
    for text in (BAD_ROUTER, BAD_POLICY):
        parse_scenario(text, "s.yaml")  # no ScenarioError: the class is not its rule


@pytest.mark.parametrize(
    ("text", "located"),
    [
        (BAD_ROUTER, "s.yaml:21:26: routers[1].plugin: router plug-in 'sim.mesh.route:Route': "
         "'sim.mesh.route:Route' is not a router"),
        (BAD_POLICY, "s.yaml:26:20: approval.policy.plugin: approval policy plug-in "
         "'sim.mesh.route:Route': 'sim.mesh.route:Route' is not an approval policy"),
    ],
)  # fmt: skip
def test_admission_locates_the_owning_layers_error(text: str, located: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        admission.parse_scenario(text, "s.yaml")
    assert [str(d).split(" (")[0] for d in caught.value.errors] == [located]


def test_admission_reports_them_beside_the_scenarios_own_errors() -> None:
    text = BAD_ROUTER.replace("duration: 480", "duration: -1")
    with pytest.raises(ScenarioError) as caught:
        admission.parse_scenario(text, "s.yaml")
    assert [d.field for d in caught.value.errors] == ["duration", "routers[1].plugin"]

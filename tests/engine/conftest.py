"""Fixtures of the engine's component tests (the inputs are built in ``parts.py``)."""

from __future__ import annotations

import textwrap

import pytest

from sim.engine.kernel import Kernel
from sim.mesh.graph import ProtocolGraph
from sim.scenario import parse_scenario
from sim.scenario.model import Scenario
from tests.harness.engine_parts import MESH, make_kernel


@pytest.fixture(scope="session")
def mesh() -> Scenario:
    scenario, _ = parse_scenario(textwrap.dedent(MESH))
    return scenario


@pytest.fixture(scope="session")
def graph(mesh: Scenario) -> ProtocolGraph:
    return ProtocolGraph.from_scenario(mesh)


@pytest.fixture
def kernel() -> Kernel:
    return make_kernel()

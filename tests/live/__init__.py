"""Tests of the live mesh (:mod:`sim.live`): real processes, real HTTP, the real SDKs."""

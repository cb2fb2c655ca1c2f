"""Tests of sim.scenario."""

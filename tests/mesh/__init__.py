"""Tests of sim.mesh."""

"""Tests of sim.engine."""

"""Tests of sim.cli."""

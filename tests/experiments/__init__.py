"""Tests of sim.experiments."""

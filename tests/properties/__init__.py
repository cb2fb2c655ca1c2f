"""Tests of sim.properties."""

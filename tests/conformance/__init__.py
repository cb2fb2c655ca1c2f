"""Tests of sim.conformance."""

"""Tests of sim.interop."""

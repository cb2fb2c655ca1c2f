"""Tests of sim.live."""

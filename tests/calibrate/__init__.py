"""Tests of sim.calibrate."""

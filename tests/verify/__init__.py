"""Tests of sim.verify."""

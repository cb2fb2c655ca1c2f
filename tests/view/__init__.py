"""Tests of sim.view."""

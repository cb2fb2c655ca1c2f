"""Tests of sim.otel."""

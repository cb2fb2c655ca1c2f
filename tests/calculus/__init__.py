"""Tests of sim.calculus."""

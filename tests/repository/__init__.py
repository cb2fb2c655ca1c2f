"""Tests of the repository as a whole: its layers, its files, its benchmarks."""

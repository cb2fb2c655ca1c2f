"""Tests of the documentation: docs/ and README.md run as written."""

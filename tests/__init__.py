"""protomesh's tests: ``tests/<package>/test_*.py`` mirrors ``sim/<package>/``, shared code in
:mod:`tests.harness` (docs/testing.md)."""

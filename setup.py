"""protomesh's build: pure Python by default; with ``PROTOMESH_COMPILE=1`` the engine's
per-event modules (``sim/native``'s ``MODULES``) compiled by mypyc into the
wheel, or beside their sources with ``build_ext --inplace`` (``make native``). This is how
mypy builds itself (``MYPY_USE_MYPYC=1`` and ``mypycify`` in its setup.py). The project's
metadata is pyproject.toml's."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _compiled() -> Any:
    """``sim/native/__init__.py`` loaded by path (it needs only the standard library)."""
    spec = importlib.util.spec_from_file_location(
        "_protomesh_native", ROOT / "sim" / "native" / "__init__.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildEngine(build_ext):  # type: ignore[misc]
    """``build_ext`` that records what it compiled (``sim/engine/native.json``) once every
    extension is built, beside them (in place or in the build's ``sim/engine``)."""

    def run(self) -> None:
        super().run()
        if not self.extensions:
            return
        compiled = _compiled()
        where = ROOT if self.inplace else Path(self.build_lib)
        target = where / "sim" / "engine" / compiled.MANIFEST
        record = compiled.manifest(ROOT / "sim" / "engine")
        target.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


ext_modules: list[Any] = []
if os.environ.get("PROTOMESH_COMPILE", "") not in ("", "0"):
    ext_modules = _compiled().extensions(ROOT, ROOT / "build" / "mypyc")

setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildEngine})

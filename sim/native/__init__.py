"""The engine's per-event modules compiled with mypyc at build time, the way mypy and black
are built: pure Python by default, compiled when the build is asked to.

The modules of :data:`MODULES` are plain, type-checked Python (``make lint``: mypy
strict). ``PROTOMESH_COMPILE=1`` makes the build (``setup.py``: :func:`extensions` hands
them to ``mypycify``) compile them into C extensions that run the same code 1.4–1.5×
faster at trace level ``full`` and 1.5–1.7× at ``protocol`` (``BENCHMARKS.md``, the hop
rows). ``make wheel`` writes that platform wheel to ``dist/``; ``make native`` builds them
in place beside their sources for a checkout (``make install``, ``make test`` and
``make sim`` run it when a source of the engine changed). An extension sits next to its
``.py`` and Python's own import system prefers it: there is no finder of ours.

What the build compiled is recorded in :data:`MANIFEST` (the SHA-256 of each module's
source, the interpreter's extension suffix, mypy's version). Importing :mod:`sim.engine`
calls :func:`verify`: a compiled engine older than a source, made for another
interpreter, or compiled only in part raises :class:`StaleBuild` naming the module and
the fix, so an edited module never runs as its old build. Only the compiled modules are
hashed: mypyc reaches every other module through Python's object model, checking types at
the boundary (a change there is a ``TypeError``, never a silent misread).

:func:`pure_copy` writes the package without its extensions: a process whose
``PYTHONPATH`` starts there runs the same source interpreted (the byte-identity tests and
the benchmarks' side-by-side rows). Both engines give byte-identical traces and metrics.

What compiling asks of those modules (mypyc's native classes): no attribute outside
the class's own; no reflection over ``__slots__``; exceptions derive from ``Exception``
(``EngineBug``, a ``RuntimeError``, lives in :mod:`sim.engine.bugs`, not compiled);
a collaborator a unit test replaces by a stand-in is typed by a ``Protocol`` (erased:
not checked at run time). Plug-in bases (routers, approval policies) are not compiled.
This package imports nothing but the standard library (``setup.py`` loads this module by
path) and nothing of the engine, so ``python -m sim native`` works beside a stale build.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The compiled modules of ``sim.engine``: the per-event path of a run.
MODULES = (
    "caller",
    "clock",
    "invocation",
    "kernel",
    "loop",
    "metrics",
    "paths",
    "recorder",
    "sampling",
    "server",
    "topology",
    "trace",
    "transport",
    "views",
    "workflows",
)
#: mypyc's group: its shared library is the module ``sim.engine.protomesh_engine__mypyc``.
GROUP = "sim.engine.protomesh_engine"
#: The engine's folder, where the compiled modules sit beside their sources.
SOURCE = Path(__file__).resolve().parents[1] / "engine"
#: What the build compiled (written by the build, beside the extensions; not committed).
MANIFEST = "native.json"
#: The build's switch (``setup.py``), as ``MYPY_USE_MYPYC`` is mypy's.
COMPILE_ENV = "PROTOMESH_COMPILE"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # e.g. .cpython-311-x86_64-linux-gnu.so

#: mypy's settings for the build: compiling needs only the compiled modules to type-check
#: (errors elsewhere are ``make lint``'s to report), and works without the repository's
#: pyproject.toml (an sdist, a wheel build in isolation).
MYPY_CONFIG = """[mypy]
plugins = pydantic.mypy
follow_imports = silent
ignore_missing_imports = True
"""


class StaleBuild(ImportError):
    """The compiled engine does not match the sources beside it (see :func:`verify`)."""


def digest(module: str, source: Path = SOURCE) -> str:
    """The SHA-256 of ``<source>/<module>.py`` as it is now."""
    return hashlib.sha256((source / f"{module}.py").read_bytes()).hexdigest()


def built(source: Path = SOURCE) -> list[str]:
    """The modules of :data:`MODULES` that have an extension for this interpreter."""
    return [m for m in MODULES if (source / f"{m}{SUFFIX}").is_file()]


def problem(source: Path = SOURCE) -> str | None:
    """Why the compiled engine in ``source`` cannot run (None: it can, or none is built)."""
    found = built(source)
    if not found:
        return None
    fix = "rebuild it (make native) or remove it (python -m sim native clean)"
    try:
        manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"the compiled engine in {source} has no readable {MANIFEST}: {fix}"
    if manifest.get("suffix") != SUFFIX:
        return f"the compiled engine was built for {manifest.get('suffix')}, not {SUFFIX}: {fix}"
    missing = [m for m in MODULES if m not in found]
    if missing:
        return f"the compiled engine lacks {', '.join(missing)}: {fix}"
    sources = manifest.get("sources", {})
    stale = [m for m in MODULES if sources.get(m) != digest(m, source)]
    if stale:
        names = ", ".join(f"{m}.py" for m in stale)
        return f"the compiled engine is older than {names} in {source}: {fix}"
    return None


def verify(source: Path = SOURCE) -> None:
    """Raise :class:`StaleBuild` when the compiled engine cannot run (see :func:`problem`)."""
    why = problem(source)
    if why is not None:
        raise StaleBuild(why)


def status() -> str:
    """Which engine this process runs and why: ``compiled (...)`` or ``pure (...)``, from
    the engine's modules this process imported (import :mod:`sim.engine` first; an engine
    that could not be imported is ``not loaded``)."""
    loaded = [sys.modules.get(f"sim.engine.{m}") for m in MODULES]
    if any(m is None for m in loaded):
        return "not loaded (import sim.engine first)"
    files = [str(getattr(m, "__file__", "")) for m in loaded]
    if all(f.endswith(SUFFIX) for f in files):
        record = json.loads((SOURCE / MANIFEST).read_text(encoding="utf-8"))
        return f"compiled (mypyc {record.get('mypy')}, {len(files)} modules, {SUFFIX})"
    if any(f.endswith(SUFFIX) for f in files):
        return "mixed (some engine modules compiled, some not): rebuild (make native)"
    if built():
        return f"pure (a compiled engine is in {SOURCE}, but this process found the sources first)"
    return (
        "pure (this installation has no compiled engine: build it with make native in a "
        f"checkout, or install a wheel built with {COMPILE_ENV}=1, e.g. make wheel)"
    )


def pure_copy(dest: Path, source: Path = SOURCE) -> Path:
    """Copy the ``sim`` package holding ``source`` into ``dest/sim`` without the compiled
    engine (its extensions and manifest); return ``dest``, the ``PYTHONPATH`` entry under
    which the same source runs interpreted."""
    package = source.parent
    skip = shutil.ignore_patterns("*.so", "*.pyd", MANIFEST, "__pycache__")
    shutil.copytree(package, dest / package.name, ignore=skip, dirs_exist_ok=True)
    return dest


def pure_command(
    dest: Path, *args: str, path: Sequence[Path] = ()
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a child of this interpreter running the pure
    engine: ``python -P ARGS`` (``-P``: the working folder is not put first on
    ``sys.path``) with ``PYTHONPATH`` the :func:`pure_copy` in ``dest``, then ``path``."""
    entries = [str(pure_copy(dest)), *(str(p) for p in path)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(entries)}
    return [sys.executable, "-P", *args], env


def extensions(root: Path, build: Path) -> list[Any]:
    """The ``ext_modules`` of a compiled build of the checkout or sdist at ``root``
    (``mypycify`` of :data:`MODULES`; its mypy config written into ``build``)."""
    from mypyc.build import mypycify

    build.mkdir(parents=True, exist_ok=True)
    config = build / "mypyc.ini"
    config.write_text(MYPY_CONFIG, encoding="utf-8")
    paths = [f"sim/engine/{m}.py" for m in MODULES]
    return list(mypycify([*paths, f"--config-file={config}"], group_name=GROUP, opt_level="3"))


def manifest(source: Path) -> dict[str, Any]:
    """What a build of the modules in ``source`` records (:data:`MANIFEST`'s content)."""
    from mypy.version import __version__ as mypy_version

    return {
        "suffix": SUFFIX,
        "mypy": mypy_version,
        "sources": {m: digest(m, source) for m in MODULES},
    }


def clean(source: Path = SOURCE) -> list[Path]:
    """Remove the compiled engine built in place in ``source``; return what was removed."""
    gone = [p for p in source.iterdir() if p.name.endswith(SUFFIX) or p.name == MANIFEST]
    for path in gone:
        path.unlink()
    return gone

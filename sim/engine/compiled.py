"""The engine's per-event modules compiled with mypyc, used only while they match their source.

The modules of :data:`MODULES` are plain, type-checked Python (``make lint``: mypy
strict). mypyc compiles them to C extensions that run the same code 1.4–1.5× faster at
trace level ``full`` and 1.5–1.7× at ``protocol`` (``BENCHMARKS.md``: the hop rows,
compiled and pure side by side). ``python -m sim
native build`` (``make native``; ``make install``, ``make test`` and ``make sim`` run it
when a source of the engine changed) writes them to ``sim/engine/_native/`` with a
manifest: the SHA-256 of each module's source, the interpreter's extension suffix and
mypy's version. Importing :mod:`sim.engine` calls :func:`activate`, which puts a finder
first on ``sys.meta_path`` that loads those modules from ``_native/`` only when the
manifest was made by this interpreter and every source still has its hash; otherwise
the source runs, so a build never shadows an edited module. ``PROTOMESH_PURE=1`` runs
the source whatever is built. Both give byte-identical traces and metrics
(``tests/engine/test_compiled.py``).

What compiling asks of those modules (mypyc's native classes): no attribute outside
the class's own; no reflection over ``__slots__``; exceptions derive from ``Exception``
(``EngineBug``, a ``RuntimeError``, lives in :mod:`sim.engine.views`, not compiled);
a collaborator a unit test replaces by a stand-in is typed by a ``Protocol`` (erased:
not checked at run time). Plug-in bases (routers, approval policies) are not compiled.
``python -m sim native status`` says which engine runs and why.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: The compiled modules of ``sim.engine``: the per-event path of a run.
MODULES = (
    "caller",
    "clock",
    "invocation",
    "kernel",
    "loop",
    "metrics",
    "recorder",
    "server",
    "trace",
    "transport",
    "workflows",
)
#: mypyc's group: the name of the shared library the compiled modules live in.
GROUP = "protomesh_engine"
_SOURCE = Path(__file__).resolve().parent
#: Where the build goes (not committed: ``.gitignore``).
NATIVE = _SOURCE / "_native"
#: Set (to anything but empty or 0) to run the source whatever is built.
PURE_ENV = "PROTOMESH_PURE"
_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # e.g. .cpython-311-x86_64-linux-gnu.so

#: What :func:`activate` decided: ``"compiled"``, or ``"pure (why)"``.
state = "pure (not activated)"


def digest(module: str) -> str:
    """The SHA-256 of ``sim/engine/<module>.py`` as it is now."""
    return hashlib.sha256((_SOURCE / f"{module}.py").read_bytes()).hexdigest()


def check(native: Path = NATIVE) -> str | None:
    """Why the build in ``native`` cannot run here (None: it can): missing, made by
    another interpreter, or older than a source."""
    try:
        manifest = json.loads((native / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "not built (make native)"
    if manifest.get("suffix") != _SUFFIX:
        return f"built for another interpreter ({manifest.get('suffix')})"
    sources = manifest.get("sources", {})
    stale = [m for m in MODULES if sources.get(m) != digest(m)]
    if stale:
        return f"older than the source of {', '.join(stale)} (make native)"
    missing = [f for f in _files().values() if not (native / f).is_file()]
    if missing:
        return f"incomplete: {', '.join(missing)} missing (make native)"
    return None


def _files() -> dict[str, str]:
    """Module name → file name of the build's extensions (the group's library included)."""
    files = {f"sim.engine.{m}": f"{m}{_SUFFIX}" for m in MODULES}
    files[f"{GROUP}__mypyc"] = f"{GROUP}__mypyc{_SUFFIX}"
    return files


class _Finder:
    """Finds the compiled modules in the build (and nothing else): a meta path finder
    (not derived from ``importlib.abc``, whose import pulls in ``importlib.resources``)."""

    def __init__(self, native: Path) -> None:
        self.paths = {name: str(native / file) for name, file in _files().items()}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.paths.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, file)
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def activate(native: Path = NATIVE) -> str:
    """Load the compiled modules from ``native`` from now on, if they can run here (see
    the module); return and keep in :data:`state` which engine runs. Call it before any
    of :data:`MODULES` is imported (``sim/engine/__init__.py`` does)."""
    global state
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        state = f"pure ({PURE_ENV} is set)"
        return state
    why = check(native)
    if why is not None:
        state = f"pure (the compiled engine is {why})"
        return state
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(native))
    state = "compiled"
    return state


#: mypy's settings for the build: the project's own (``make lint``, strict) need the
#: repository's pyproject.toml, absent where the package is installed; compiling needs
#: only the compiled modules to type-check (errors elsewhere are ``make lint``'s to report).
_MYPY = """[mypy]
plugins = pydantic.mypy
follow_imports = silent
ignore_missing_imports = True
"""

#: The setup script the build runs in a scratch folder (so no project file is read).
_SETUP = """
import sys
from mypyc.build import mypycify
from setuptools import setup

lib, group, *paths = sys.argv[1:]
setup(
    name="protomesh-engine",
    ext_modules=mypycify(paths, group_name=group, opt_level="3"),
    script_args=["build_ext", "--build-lib", lib, "--build-temp", "temp"],
)
"""


def build(native: Path = NATIVE) -> Path:
    """Compile :data:`MODULES` with mypyc into ``native`` (replaced whole, the manifest
    last); raise :class:`BuildError` with the compiler's last lines if it fails."""
    import shutil
    import subprocess
    import tempfile

    try:
        from mypy.version import __version__ as mypy_version
    except ImportError:
        raise BuildError("mypy, which carries mypyc, is not installed (pip install mypy)") from None

    sources = {m: digest(m) for m in MODULES}  # before compiling: an edit meanwhile is seen
    with tempfile.TemporaryDirectory(prefix="protomesh-native-") as tmp:
        work = Path(tmp)
        (work / "setup.py").write_text(_SETUP, encoding="utf-8")
        lib = work / "lib"
        paths = [str(_SOURCE / f"{m}.py") for m in MODULES]
        (work / "mypy.ini").write_text(_MYPY, encoding="utf-8")
        config = ["--config-file", str(work / "mypy.ini")]
        done = subprocess.run(
            [sys.executable, "setup.py", str(lib), GROUP, *config, *paths],
            cwd=work,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-12:])
            raise BuildError(f"mypyc failed (exit {done.returncode}):\n{tail}")
        staged = work / "native"
        staged.mkdir()
        for name, file in _files().items():
            parts = name.split(".")
            built = lib.joinpath(*parts[:-1], file)
            shutil.copy2(built, staged / file)
        manifest = {"suffix": _SUFFIX, "mypy": mypy_version, "sources": sources}
        if native.exists():
            shutil.rmtree(native)
        shutil.copytree(staged, native)
        (native / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return native


class BuildError(Exception):
    """The compiled engine could not be built (the source still runs)."""

"""``python -m sim native build``: the compiled engine of a checkout, built in place (what
``make native`` runs): ``PROTOMESH_COMPILE=1 setup.py build_ext --inplace`` with this
interpreter, the old build removed first and whatever a failed build left removed after."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sim.native as compiled

__all__ = ["BuildError", "build_in_place"]


class BuildError(Exception):
    """The compiled engine could not be built (the source still runs)."""


def build_in_place(root: Path = compiled.SOURCE.parents[1]) -> Path:
    """Compile the engine in the checkout at ``root``; return where it went. Raises
    :class:`BuildError` with the compiler's last lines (or why there is nothing to build)."""
    setup = root / "setup.py"
    if not setup.is_file():
        raise BuildError(
            f"no setup.py in {root}: an installed package is compiled when its wheel is "
            f"built (PROTOMESH_COMPILE=1 pip wheel . in a checkout, or make wheel)"
        )
    try:
        import mypyc  # noqa: F401
    except ImportError:
        raise BuildError("mypy, which carries mypyc, is not installed (pip install mypy)") from None
    engine = root / "sim" / "engine"
    compiled.clean(engine)
    env = {**os.environ, compiled.COMPILE_ENV: "1"}
    done = subprocess.run(
        [sys.executable, str(setup), "-q", "build_ext", "--inplace"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    why = compiled.problem(engine) if done.returncode == 0 else None
    if done.returncode != 0 or why is not None or not compiled.built(engine):
        compiled.clean(engine)
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-12:])
        raise BuildError(why or f"mypyc failed (exit {done.returncode}):\n{tail}")
    return engine

"""``python -m sim`` and the ``protomesh`` script: the protomesh command line.

Stops are armed first, before the command line loads (docs/experiments.md#signals): from then
on, SIGINT or SIGTERM ends the command with one line and exit 130 or 143. A dependency this
interpreter cannot import ends it with one line saying how to get it, and exit 2. Before
numpy loads, its BLAS is held to one thread (:data:`BLAS_THREADS`) unless the user set
its count.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from sim.longlived import freeze, long_lived
from sim.processes import Stopped, ignore_signals, stop_on_signals_from_now

#: a module's name → the package that installs it, where the two differ
_PACKAGES = {
    "yaml": "PyYAML",
    "a2a": "a2a-sdk",
    "dask": "protomesh[dask]",
    "distributed": "protomesh[dask]",
    "playwright": "protomesh[test]",
}


#: The BLAS thread pools numpy's and SciPy's OpenBLAS start at import, one thread per core,
#: held to one: the command's parallelism is processes (``--jobs``, Dask), it multiplies no
#: matrix large enough to share, and the idle threads spin (``run --trace off`` of the
#: 1,000-agent benchmark mesh: 1.43 to 1.22 s CPU, the same wall time; issue 36). Children
#: inherit it; a count the user set in the environment wins.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def one_blas_thread(environ: MutableMapping[str, str]) -> None:
    """Set :data:`BLAS_THREADS` in ``environ`` where the user did not (before numpy loads)."""
    for name, count in BLAS_THREADS.items():
        environ.setdefault(name, count)


def missing_dependency(module: str, python: str) -> str:
    """The one line for a dependency ``module`` that the interpreter ``python`` lacks."""
    package = _PACKAGES.get(module, module)
    return (
        f"protomesh: {python} cannot import {module!r} (package {package}): this Python is "
        "not the one protomesh was installed into. Run `make sim` once (it installs "
        "protomesh into .venv), then `source .venv/bin/activate` or call "
        "`.venv/bin/protomesh` (docs/reference/cli.md)"
    )


def run() -> None:
    """Arm the stops, run the command line, exit with its code."""
    import os
    import sys

    one_blas_thread(os.environ)
    try:
        stop_on_signals_from_now()
        with long_lived():  # the command line's modules: kept to the end
            from sim.cli import main

        code = main()
    except Stopped as stopped:  # outside the command's handler: while the line loads
        ignore_signals()
        print(stopped, file=sys.stderr)
        code = stopped.code
    except KeyboardInterrupt:  # Python's own handler, put back by a library meanwhile
        ignore_signals()
        print("interrupted", file=sys.stderr)
        code = 130
    except ModuleNotFoundError as missing:  # e.g. the system Python, not .venv's
        top = (missing.name or "").partition(".")[0]
        if not top or top == "sim":
            raise
        print(missing_dependency(top, sys.executable), file=sys.stderr)
        code = 2
    # The command is over and its exit code decided: a signal arriving now, while the
    # interpreter finalises (pools joined, files closed; Python puts back the default
    # handlers then), must not turn a finished command into a death by signal.
    ignore_signals()
    # Nothing is left to collect that matters: a frozen heap spares the interpreter's
    # final collection a walk over every object (0.4 s after compare on 10,000 agents).
    freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()

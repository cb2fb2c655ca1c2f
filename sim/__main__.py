"""``python -m sim``: the protomesh command line."""

import gc
import sys

from sim.processes import Stopped, ignore_signals, stop_on_sigterm

if __name__ == "__main__":
    stop_on_sigterm()
    try:
        from sim.cli import main
    except KeyboardInterrupt:  # Ctrl-C while the command line loads
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Stopped as stopped:
        print(stopped, file=sys.stderr)
        sys.exit(stopped.code)
    try:
        code = main()
    except KeyboardInterrupt:  # a signal between the command's end and the line below
        print("interrupted", file=sys.stderr)
        code = 130
    except Stopped as stopped:
        print(stopped, file=sys.stderr)
        code = stopped.code
    # The command is over and its exit code decided: a signal arriving now, while the
    # interpreter finalises (pools joined, files closed; Python puts back the default
    # handlers then), must not turn a finished command into a death by signal.
    ignore_signals()
    # Nothing is left to collect that matters: a frozen heap spares the interpreter's
    # final collection a walk over every object (0.4 s after compare on 10,000 agents).
    gc.freeze()
    sys.exit(code)

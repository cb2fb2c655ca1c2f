"""``python -m sim``: the protomesh command line."""

import sys

from sim.processes import Stopped, stop_on_sigterm

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
    sys.exit(main())

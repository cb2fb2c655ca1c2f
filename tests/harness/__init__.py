"""The one place test modules share code from (no test module imports another): where
the files are (``paths``), real servers in threads, the browser page, MCP over HTTP,
plug-in commands, the routing and bisimulation oracles, the wire tap, engine parts, tiny
engine runs, calibration traces, live paths and runs, scenario strategies, the verify
runs and the warm ``python -m sim`` (``warm_sim``).
Fixtures stay in the ``conftest.py`` files."""

"""The one place test modules share code from (no test module imports another): where
the files are (``paths``), real servers in threads, the browser page, MCP over HTTP,
plug-in commands, the routing and bisimulation oracles, the wire tap, engine parts, tiny
engine runs, calibration traces, live paths and runs, scenario strategies, the verify
runs, the warm ``python -m sim`` (``warm_sim``) and the folders built once per session
(``session_once``).
Fixtures stay in the ``conftest.py`` files."""

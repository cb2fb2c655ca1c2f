"""``python -m sim`` in a Python that lacks a dependency: one line, exit 2 (issue 37)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sim.__main__ import missing_dependency

ROOT = Path(__file__).resolve().parents[1]

#: the command line run with ``yaml`` made unimportable (``None`` in ``sys.modules``)
_WITHOUT_YAML = (
    "import sys; sys.modules['yaml'] = None; "
    "sys.argv = ['protomesh', 'validate', 'scenarios/train_booking.yaml']; "
    "from sim.__main__ import run; run()"
)


def test_a_missing_dependency_is_one_line_naming_it_and_the_fix() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_YAML], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(
        f"protomesh: {sys.executable} cannot import 'yaml' (package PyYAML)"
    )
    assert "source .venv/bin/activate" in proc.stderr and ".venv/bin/protomesh" in proc.stderr


def test_the_message_names_the_package_where_it_differs_from_the_module() -> None:
    assert "(package a2a-sdk)" in missing_dependency("a2a", "/usr/bin/python3")
    assert "(package simpy)" in missing_dependency("simpy", "/usr/bin/python3")
    assert missing_dependency("simpy", "/usr/bin/python3").startswith(
        "protomesh: /usr/bin/python3 cannot import 'simpy'"
    )


def test_the_installed_script_is_the_command_line() -> None:
    """pyproject.toml's ``protomesh`` entry point names the function ``python -m sim`` runs."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    assert scripts == {"protomesh": "sim.__main__:run"}
    script = Path(sys.executable).with_name("protomesh")
    if script.exists():  # the virtual environment `make sim` made
        proc = subprocess.run([str(script), "--version"], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.startswith("protomesh ")

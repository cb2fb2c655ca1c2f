"""The browser tests leave the worker's event loop free for the tests after them.

Playwright's sync API marks its event loop running in the thread it was started in until
it stops; a page fixture that lived for the whole session made every later ``asyncio.run``
in that xdist worker (the MCP, A2A and live tests) fail with "cannot be called from a
running event loop", a failure that depended on which worker got which tests. A pytest
run in a child process, with tests/harness/browser_page.py as its plug-in, runs a test on
the page and then, in another module, one that calls ``asyncio.run``: both must pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.browser_page import CHROMIUM
from tests.harness.paths import REPO

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)"),
]

ON_THE_PAGE = """
def test_on_the_page(tab):
    tab.page.set_content("<p>here</p>")
    assert tab.page.text_content("p") == "here"
"""

AFTER_IT = """
import asyncio

def test_asyncio_runs_after_the_page():
    assert asyncio.run(asyncio.sleep(0, result=7)) == 7
"""


#: One process, no cache, the repository's browser fixtures as the only plug-in.
PLAIN = ["-p", "no:xdist", "-p", "no:cacheprovider", "-p", "tests.harness.browser_page"]


def test_asyncio_runs_in_the_module_after_a_browser_module(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_a_page.py").write_text(ON_THE_PAGE, encoding="utf-8")
    (tmp_path / "test_b_loop.py").write_text(AFTER_IT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *PLAIN, "test_a_page.py", "test_b_loop.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout

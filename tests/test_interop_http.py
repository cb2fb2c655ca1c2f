"""``serve mcp FILE --http HOST:PORT`` on bad addresses (the sessions over Streamable HTTP,
both revisions, are in ``tests/test_interop_approval.py``)."""

from __future__ import annotations

import pytest
from mcp_http import REPO

from sim.cli import main

TRAIN = REPO / "scenarios" / "train_booking.yaml"


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("127.0.0.1", "expected HOST:PORT"),
        ("127.0.0.1:70000", "the port must be a number from 0 to 65535"),
        ("::1:80", "write an IPv6 host in brackets"),
        ("no-such-host.invalid:80", "cannot resolve 'no-such-host.invalid'"),
    ],
)
def test_a_bad_address_is_bad_input(
    address: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "mcp", str(TRAIN), "--http", address]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err

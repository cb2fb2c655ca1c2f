"""Shared fixtures: the real data the tests use is shipped in the repository's ``data/``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from hypothesis import settings

from tests.harness.session_once import built_once
from tests.harness.small_mesh import SMALL_FILE

if TYPE_CHECKING:
    from sim.scenario.model import Scenario

#: The default suite draws the same examples on every run and machine (derandomized):
#: a CI run cannot fail on a drawing nobody can reproduce. ``make fuzz`` loads
#: ``explore`` (HYPOTHESIS_PROFILE=explore): new random drawings each round. Neither has
#: a deadline: an example's wall time is this shared machine's load, not the code's
#: (no wall-clock assertion in a test; timing is ``make bench``'s).
settings.register_profile("suite", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile(
    "explore", derandomize=False, database=None, print_blob=True, deadline=None
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"

#: the browser tests' page and Chromium, built once per session (tests/harness/browser_page.py)
pytest_plugins = ["tests.harness.browser_page"]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which starts the workers
def pytest_sessionstart(session: pytest.Session) -> None:
    """Under xdist, the controller hands its workers the session's one warm ``python -m
    sim`` zygote, started when the first asks (tests/harness/warm_sim.py): its preload
    (about 2 s of CPU) is paid once a session, not once a worker."""
    if session.config.pluginmanager.hasplugin("dsession"):
        from tests.harness.warm_sim import serve_session_zygote

        serve_session_zygote()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The warm ``python -m sim``'s zygote ends with the session (tests/harness/warm_sim.py)."""
    from tests.harness.warm_sim import stop_warm_sim

    stop_warm_sim()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The repository's ``data/`` folder (real SGD, MCP tool lists, wire captures, MCP schemas)."""
    assert DATA.is_dir(), f"the repository's data folder is missing: {DATA}"
    return DATA


# --- a real engine trace of train_booking and its mutations (conformance and properties) ---

Events = list[dict[str, Any]]
TRAIN = REPO / "scenarios" / "train_booking.yaml"


@pytest.fixture(scope="session")
def train_scenario() -> Scenario:
    """train_booking, 300 s, its gw1 outage moved from 600-900 s to 100-200 s: the
    scenario of :func:`train_trace`."""
    from sim.scenario import load_scenario
    from sim.scenario.model import FailureSpec

    outage = FailureSpec.model_validate({"node": "gw1", "at": 100.0, "for": 100.0})
    return load_scenario(TRAIN).model_copy(update={"duration": 300.0, "failures": [outage]})


@pytest.fixture(scope="session")
def train_trace(tmp_path_factory: pytest.TempPathFactory, train_scenario: Scenario) -> Events:
    """One real replication of :func:`train_scenario` (~7,400 events): the trace holds the
    outage (node_down, drops, timeouts, node_up) and its recovery, every label the checks
    read, at a third of the events of the 1,000 s the outage needs where the scenario
    places it. Run once per session (``built_once``), read by each worker."""

    def build(out: Path) -> None:
        from sim.engine import run_replication

        out.mkdir(parents=True)
        run_replication(train_scenario, "dijkstra", 0, out, "full")

    out = built_once(tmp_path_factory, "train-trace", build)
    lines = (out / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def copied(events: Events) -> Events:
    """A deep copy of JSON events (a JSON round trip through msgspec: a third of the
    standard library's round trip, itself a third of ``copy.deepcopy``'s time, on a trace's
    plain dicts, lists, strings and numbers; floats come back exact, keys in order)."""
    copy: Events = _JSON_DECODER.decode(_JSON_ENCODER.encode(events))
    return copy


_JSON_ENCODER = msgspec.json.Encoder()
_JSON_DECODER = msgspec.json.Decoder()


@pytest.fixture
def train_copy(train_trace: Events) -> Events:
    """A copy of :func:`train_trace` of the test's own, to change."""
    return copied(train_trace)


def in_order(events: Events) -> Events:
    """A mutated trace made SPEC §5-ordered again, in place (``seq`` renumbered, ``t`` never
    decreasing), so the checks, not the reader's order check, see the mutation."""
    last_t = 0.0
    for k, e in enumerate(events):
        e["seq"] = k
        last_t = e["t"] = max(last_t, e["t"])
    return events


def _drop_approve(events: Events) -> Events:
    i = next(
        k
        for k, e in enumerate(events)
        if e["label"] == "approve"
        and e["tool"] == "book_train"
        and any(x["label"] == "execute" and x["inv"] == e["inv"] for x in events[k:])
    )
    del events[i]
    return events


def _swap_required(events: Events) -> Events:
    book = next(e for e in events if e["label"] == "execute" and e["tool"] == "book_train")
    inst = book["inst"]
    bal = [e for e in events if e["inst"] == inst and e["task"] == "bal"]
    rest = [e for e in events if not (e["inst"] == inst and e["task"] == "bal")]
    last = max(k for k, e in enumerate(rest) if e["inst"] == inst and e["task"] == "book")
    return in_order(rest[: last + 1] + bal + rest[last + 1 :])


def _both_exclusive(events: Events) -> Events:
    k, send = next(
        (k, e)
        for k, e in enumerate(events)
        if e["label"] == "execute" and e["tool"] == "send_ticket"
    )
    events.insert(k + 1, {**send, "tool": "print_ticket", "task": "print", "inv": 10**9})
    return in_order(events)


def _removed_retry(events: Events) -> Events:
    del events[next(k for k, e in enumerate(events) if e["label"] == "retry")]
    return events


def _execute_without_validate(events: Events) -> Events:
    k, call = next(
        (k, e)
        for k, e in enumerate(events)
        if e["label"] == "call" and e["tool"] == "check_balance"
    )
    events.insert(k + 1, {**call, "label": "execute", "agent": "accounts", "detail": {}})
    return in_order(events)


def _deleted_deliver(events: Events) -> Events:
    del events[next(k for k, e in enumerate(events) if e["label"] == "deliver")]
    return events


def _hop_in_missing_protocol(events: Events) -> Events:
    hop = next(
        e
        for e in events
        if e["label"] == "hop" and {e["detail"]["from"], e["detail"]["to"]} == {"planner", "gw1"}
    )
    hop["proto"] = hop["detail"]["proto"] = "MCP"
    return events


def _hop_from_a_down_node(events: Events) -> Events:
    down = next(k for k, e in enumerate(events) if e["label"] == "node_down")
    node = events[down]["agent"]
    hop = next(e for e in events[down:] if e["label"] == "hop")
    hop["detail"]["from"] = hop["agent"] = node
    hop["detail"]["to"] = "planner" if node != "planner" else "gw1"
    return events


def _no_approvals(events: Events) -> Events:
    return [e for e in events if e["label"] != "approve"]


def _no_hops(events: Events) -> Events:
    return [e for e in events if e["label"] != "hop"]


def _send_over_missing_link(events: Events) -> Events:
    send = next(e for e in events if e["label"] == "send" and len(e["detail"]["path"]) == 3)
    path = send["detail"]["path"]
    send["detail"]["path"] = [path[0], path[-1]]  # the scenario has no such link
    return events


#: name → mutation of a copy of the train_booking trace (what each breaks is in its name)
MUTATIONS = {
    "drop_approve": _drop_approve,
    "swap_required": _swap_required,
    "both_exclusive": _both_exclusive,
    "removed_retry": _removed_retry,
    "execute_without_validate": _execute_without_validate,
    "deleted_deliver": _deleted_deliver,
    "hop_in_missing_protocol": _hop_in_missing_protocol,
    "hop_from_a_down_node": _hop_from_a_down_node,
    "no_approvals": _no_approvals,
    "no_hops": _no_hops,
    "send_over_missing_link": _send_over_missing_link,
}


@pytest.fixture(scope="session")
def train_mutations(train_trace: Events) -> dict[str, Events]:
    """The unmutated trace (``none``) and each mutation of :data:`MUTATIONS`."""
    out = {"none": copied(train_trace)}
    for name, mutate in MUTATIONS.items():
        out[name] = mutate(copied(train_trace))
    return out


# --- a small compare with its figures (the experiments tests) ---

SMALL_MESH = SMALL_FILE


@pytest.fixture(scope="session")
def small_drawn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results of ``compare`` on :data:`SMALL_MESH` in this process (one job, 2
    replications, figures drawn), once per session (``built_once``): read-only for the
    tests that set it beside another compare or draw its figures again (copy it to change
    it)."""

    def build(out: Path) -> None:
        from sim.cli import main

        argv = ["compare", str(SMALL_MESH), "--out", str(out), "--quiet", "--jobs", "1"]
        assert main([*argv, "--replications", "2"]) == 0

    return built_once(tmp_path_factory, "small-drawn", build)


# --- a small file system of its own (full-disk tests) ---


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``tmpfs(size)``: a fresh tmpfs of ``size`` (``"700k"``) mounted under ``tmp_path``,
    unmounted after the test (needs root and mount: skipped with the reason otherwise)."""
    import subprocess
    import uuid

    mounted: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"tmpfs-{len(mounted)}"
        where.mkdir()
        done = subprocess.run(
            [
                "mount",
                "-t",
                "tmpfs",
                "-o",
                f"size={size}",
                f"pm-{uuid.uuid4().hex[:8]}",
                str(where),
            ],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            reason = done.stderr.decode().strip() or done.returncode
            pytest.skip(f"cannot mount a tmpfs here: {reason}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)

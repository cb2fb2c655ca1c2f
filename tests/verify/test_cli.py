"""``python -m sim verify`` (SPEC §11): the issue's claims, verdicts, exit codes, output,
and every counterexample confirmed by ``check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cli import main
from tests.harness.engine_runs import one_sided
from tests.harness.verify_runs import REPO, TRAIN, confirm, events, verdicts, verify

PLUS = str(REPO / "scenarios" / "mcp_vs_mcp_plus.yaml")


def test_dijkstra_proves_recovery_and_write_approval_on_train_booking(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, obj, _ = verify(
        capsys,
        TRAIN,
        "--router",
        "dijkstra",
        "--property",
        "recovery",
        "--property",
        "write_approval",
        "--counterexamples",
        str(tmp_path),
    )
    assert code == 0
    assert obj["router"] == "dijkstra" and obj["workflow"] == "book"
    for p in obj["properties"]:
        assert p["verdict"] == "holds" and p["counterexample"] is None
        assert p["states"] > 100 and p["transitions"] > p["states"]
        # what the explicit engine's sizes count: the states its search stored
        assert (p["searched_states"], p["searched_transitions"]) == (p["states"], p["transitions"])
        assert "model_states" not in p


def test_resilient_finds_the_recovery_violation_through_the_failover_translation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, obj, _ = verify(
        capsys,
        TRAIN,
        "--router",
        "resilient",
        "--property",
        "recovery",
        "--counterexamples",
        str(tmp_path),
    )
    assert code == 1
    (p,) = obj["properties"]
    assert p["verdict"] == "violated"
    path = p["counterexample"]
    assert path == str(tmp_path / "book" / "resilient" / "recovery.jsonl")
    evs = events(path)
    # the cause: book_train discovered through gw2, translated MCP+ → MCP, losing its
    # failure modes; an error then gets the default abort instead of the declared one
    tr = [e for e in evs if e["label"] == "translate"]
    assert [
        (e["detail"]["at"], e["detail"]["from_proto"], e["detail"]["to_proto"]) for e in tr
    ] == [("gw2", "MCP+", "MCP")]
    assert "failure_modes" in tr[0]["detail"]["dropped"]
    listed = [e for e in evs if e["label"] == "list" and e["tool"] == "book_train"]
    assert "failure_modes" not in listed[0]["detail"]["fields"]
    assert [e["label"] for e in evs[-2:]] == ["error", "abort"]
    out = confirm(capsys, path, TRAIN, "recovery")
    err = evs[-2]
    assert f"error {err['detail']['error']} of invocation {err['inv']} of book_train" in out
    assert f"not abort (seq {evs[-1]['seq']})" in out


def test_mcp_plus_caller_never_writes_unapproved_and_plain_mcp_does_shortest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, obj, _ = verify(
        capsys,
        PLUS,
        "--set",
        "approval.mcp_policy=never",
        "--property",
        "write_approval",
        "--counterexamples",
        str(tmp_path),
    )
    assert code == 1
    by = verdicts(obj)
    assert by[("book-plus", "write_approval")]["verdict"] == "holds"
    bad = by[("book-mcp", "write_approval")]
    assert bad["verdict"] == "violated"
    evs = events(bad["counterexample"])
    # Hand-derived minimum: book (the write) runs only after seats and bags (≺); over
    # plain MCP the caller knows no Requires (get_fare) and asks no approval (policy
    # never). So: wf_start; per read task list, call, validate, execute, result (2 × 5);
    # then book's list, call, validate and the unapproved execute (4): 1 + 10 + 4 = 15.
    assert len(evs) == 15
    assert evs[-1]["label"] == "execute" and evs[-1]["tool"] == "book_flight"
    assert evs[-1]["detail"]["approved"] is False
    assert sorted({e["task"] for e in evs if e["task"]}) == ["bags", "book", "seats"]
    confirm(capsys, bad["counterexample"], PLUS, "write_approval")


def test_user_properties_online_and_at_scope_end_are_confirmed_by_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    props = tmp_path / "props.yaml"
    props.write_text(
        "- {name: no-abort, scope: invocation, formula: 'G !abort'}\n"
        "- {name: answered, scope: invocation, formula: 'call -> F (result | prompt | deny)'}\n"
        "- {name: in-time, scope: invocation, formula: 'G (call -> F[<=30] result)'}\n"
        "- {name: everywhere, scope: run, formula: 'G !abort'}\n"
    )
    code, obj, _ = verify(
        capsys,
        TRAIN,
        "--router",
        "resilient",
        "--properties",
        str(props),
        "--property",
        "no-abort",
        "--property",
        "answered",
        "--property",
        "in-time",
        "--property",
        "everywhere",
        "--counterexamples",
        str(tmp_path / "cx"),
    )
    assert code == 1
    by = verdicts(obj)
    assert by[("book", "in-time")]["verdict"] == "not-decidable"
    assert by[("book", "everywhere")]["verdict"] == "not-decidable"
    for name in ("no-abort", "answered"):
        p = by[("book", name)]
        assert p["verdict"] == "violated"
        confirm(capsys, p["counterexample"], TRAIN, name, "--properties", str(props))


def test_the_state_bound_gives_undecided_and_exit_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, obj, _ = verify(
        capsys,
        TRAIN,
        "--property",
        "write_approval",
        "--max-states",
        "10",
        "--counterexamples",
        str(tmp_path),
    )
    assert code == 3
    (p,) = obj["properties"]
    assert p["verdict"] == "undecided" and p["states"] == 10


def test_transport_checks_are_not_decidable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, obj, _ = verify(
        capsys, TRAIN, "--property", "conservation", "--counterexamples", str(tmp_path)
    )
    assert code == 0
    assert obj["properties"][0]["verdict"] == "not-decidable"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workflow", "nope"], "--workflow: unknown workflow nope (known: book)"),
        (["--property", "nope"], "--property: unknown property nope"),
        (["--router", "dijkstr"], "--router: unknown router 'dijkstr'"),
        (["--max-states", "0"], "--max-states: must be at least 1"),
        (["--set", "approval.mcp_policy=sometimes"], "approval.mcp_policy"),
    ],
)
def test_bad_input_is_a_located_message_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    capsys.readouterr()
    assert main(["verify", TRAIN, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_bad_scenario_is_located(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        Path(TRAIN).read_text().replace("grant_probability: 0.95", "grant_probability: 2")
    )
    capsys.readouterr()
    assert main(["verify", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:" in err and "grant_probability" in err


def test_aut_is_read_by_our_bisim(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from sim.calculus.lts import read_aut

    out = tmp_path / "book.aut"
    code, _, err = verify(
        capsys,
        str(REPO / "scenarios" / "gateway_failover.yaml"),
        "--property",
        "exclusive",
        "--aut",
        str(out),
        "--counterexamples",
        str(tmp_path),
    )
    assert code == 0
    lts = read_aut(out)
    assert lts.n_states > 100
    assert "call(book,book_offer)" in lts.labels
    assert "execute(book,book_offer)" in lts.labels
    assert f"state space written to {out}" in err
    capsys.readouterr()
    assert main(["bisim", str(out), str(out)]) == 0
    # a different model's space is not equivalent to it
    from benchmarks.bench_verify import independent

    small = tmp_path / "one.yaml"
    small.write_text(independent(1))
    other = tmp_path / "one.aut"
    verify(
        capsys,
        str(small),
        "--property",
        "exclusive",
        "--aut",
        str(other),
        "--counterexamples",
        str(tmp_path),
    )
    capsys.readouterr()
    assert main(["bisim", str(out), str(other)]) == 1


def test_the_cli_defaults_are_the_searchs() -> None:
    """``--help`` imports nothing of the search: its defaults are copies, kept equal."""
    from sim.cli import verify as cli
    from sim.verify import MAX_STATES, MAX_SUSPECT_SETS

    assert (cli.DEFAULT_MAX_STATES, cli.DEFAULT_SUSPECT_SETS) == (MAX_STATES, MAX_SUSPECT_SETS)


@pytest.mark.parametrize("declared_on", ["send_it", "print_it"])
def test_an_exclusive_pair_declared_on_one_side_binds_both_in_the_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, declared_on: str
) -> None:
    """As the engine (tests/engine/test_behaviour.py): over MCP+ the caller skips
    print_it after send_it whichever declares the pair, so ``exclusive`` holds; over
    plain MCP it knows no pair, and the counterexample is one ``check`` confirms (with
    the pair declared on send_it alone, the model let both run over MCP+ too)."""
    verdict = {}
    for protocol in ("MCP+", "MCP"):
        path = tmp_path / f"{protocol}.yaml"
        path.write_text(one_sided(protocol, declared_on), encoding="utf-8")
        out = tmp_path / protocol
        _, obj, _ = verify(
            capsys, str(path), "--property", "exclusive", "--counterexamples", str(out)
        )
        found = verdicts(obj)[("w", "exclusive")]
        verdict[protocol] = found["verdict"]
        if found["verdict"] == "violated":
            confirm(capsys, found["counterexample"], str(path), "exclusive")
    assert verdict == {"MCP+": "holds", "MCP": "violated"}

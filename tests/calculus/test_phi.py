"""Φ, Φ⁺ and their inverses; Theorems 4.3, 5.7 and 7.1 decided on the real SGD schema.

The counts asserted here are the ones docs/calculus.md reports.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.calculus.bisim import bisimilar
from sim.calculus.lts import relabel
from sim.calculus.mcp import Abort, SideEffect, Tool, ToolPlus, tool_lts, tool_plus_from_mapping
from sim.calculus.phi import phi, phi_annotated, phi_plus, phi_services, schema
from sim.calculus.sgd import Intent, Service, Slot, intent_lts, load_schema
from sim.calculus.theorems import (
    TheoremReport,
    action_equivalence,
    hide_approval,
    intent_tool_bisimilar,
    theorem_report,
)
from sim.calculus.unphi import UNKNOWN, unphi, unphi_plus, unphi_services

TRANSACTIONAL = (
    "Banks_1__TransferMoney",
    "Buses_1__BuyBusTicket",
    "Buses_2__BuyBusTicket",
    "Calendar_1__AddEvent",
    "Events_1__BuyEventTickets",
    "Events_2__BuyEventTickets",
    "Flights_1__ReserveOnewayFlight",
    "Flights_1__ReserveRoundtripFlights",
    "Homes_1__ScheduleVisit",
    "Hotels_1__ReserveHotel",
    "Hotels_2__BookHouse",
    "Hotels_3__ReserveHotel",
    "Media_1__PlayMovie",
    "Movies_1__BuyMovieTickets",
    "Music_1__PlaySong",
    "Music_2__PlayMedia",
    "RentalCars_1__ReserveCar",
    "RentalCars_2__ReserveCar",
    "Restaurants_1__ReserveRestaurant",
    "RideSharing_1__GetRide",
    "RideSharing_2__GetRide",
    "Services_1__BookAppointment",
    "Services_2__BookAppointment",
    "Services_3__BookAppointment",
)

OPTIONAL_ONLY = ("Music_1__LookupSong", "Music_2__LookupMusic")
"""The two train intents without required slots: all their slots are optional (typed, one an
enum), so Φ's tool can fail validation and the intent has no MissingSlots to match it."""


def in_schema_order(report: TheoremReport, *groups: tuple[str, ...]) -> tuple[str, ...]:
    names = {n for g in groups for n in g}
    return tuple(n for n in report.intents if n in names)


FROM = Slot("from", "Departure station", True, ("8507000", "8508050"))
TO = Slot("to", "Arrival station", True, ("8507000", "8508050"))
CLASS = Slot("class", "Travel class", True, ("economy", "business"))
BOOK = Intent("BookTrain", "Books a Train", (FROM, TO), (CLASS,), True, (("class", "economy"),))


@pytest.fixture(scope="module")
def services(shared_data: Path) -> tuple[Service, ...]:
    return load_schema(shared_data / "sgd" / "train" / "schema.json")


@pytest.fixture(scope="module")
def report(services: tuple[Service, ...]) -> TheoremReport:
    return theorem_report(services)


def test_phi_is_definition_4_1() -> None:
    """The paper's §4.2 example, plus the optional slot and its real default."""
    tool = phi(BOOK)
    assert tool.name == "BookTrain" and tool.description == "Books a Train"
    assert tool.annotations is None
    assert tool.input_schema == {
        "type": "object",
        "required": ["from", "to"],
        "properties": {
            "from": {
                "type": "string",
                "description": "Departure station",
                "enum": list(FROM.possible_values),
            },
            "to": {
                "type": "string",
                "description": "Arrival station",
                "enum": list(TO.possible_values),
            },
            "class": {
                "type": "string",
                "description": "Travel class",
                "enum": ["economy", "business"],
                "default": "economy",
            },
        },
    }


def test_only_categorical_slots_become_enum(services: tuple[Service, ...]) -> None:
    restaurants = next(s for s in services if s.name == "Restaurants_1")
    find = next(i for i in restaurants.intents if i.name == "FindRestaurants")
    props = schema(find)["properties"]
    assert "enum" not in props["cuisine"] and props["cuisine"]["examples"][:2] == [
        "Mexican",
        "Chinese",
    ]
    assert "enum" in props["price_range"]
    assert all(p["type"] == "string" for p in props.values())
    assert all("default" not in p for p in props.values())  # their defaults are all dontcare


def test_phi_plus_metadata_is_section_7_2(services: tuple[Service, ...]) -> None:
    hotels = next(s for s in services if s.name == "Hotels_1")
    search, reserve = hotels.intents[1], hotels.intents[0]
    plus = phi_plus(reserve, hotels)
    assert plus.side_effects is SideEffect.WRITE and plus.requires_approval is True
    assert plus.summary == reserve.description
    assert [f.error for f in plus.failure_modes or ()] == ["ValidationError", "ExecutionError"]
    search_plus = phi_plus(search, hotels)
    assert search_plus.side_effects is SideEffect.READ and search_plus.requires_approval is False
    assert [d.tool for d in search_plus.dependencies or ()] == ["Hotels_1__ReserveHotel"]


def test_real_schema_counts(report: TheoremReport) -> None:
    assert report.services == 26
    assert len(report.intents) == 53
    assert report.transactional == TRANSACTIONAL


def test_theorem_4_3_with_approval_hidden_fails_exactly_without_required_slots(
    report: TheoremReport, services: tuple[Service, ...]
) -> None:
    """Φ's tool offers error(n,ValidationError) for any constrained input (every Φ property
    has a ``type``); SGD's MissingSlots exists only with required slots. So S ≁ Φ(S) exactly
    for the intents with optional slots only, by the trace call(n) error(n,ValidationError)."""
    assert report.fails("phi_hidden") == OPTIONAL_ONLY
    assert report.fails("phi_plus_hidden") == OPTIONAL_ONLY
    by_name = {i.qualified_name: i for s in services for i in s.intents}
    for n in OPTIONAL_ONLY:
        intent = by_name[n]
        assert not intent.required and intent.optional
        result = intent_tool_bisimilar(intent, phi(intent), approval="hidden")
        assert result.distinction is not None
        assert result.distinction.trace == (f"call({n})", f"error({n},ValidationError)")


def test_theorem_5_7_with_approval_observable_phi_fails_exactly_on_t(report: TheoremReport) -> None:
    assert report.fails("phi_observable") == in_schema_order(report, TRANSACTIONAL, OPTIONAL_ONLY)
    assert report.count("phi_observable") == 27
    assert report.fails("phi_plus_observable") == OPTIONAL_ONLY


def test_a_denying_approver_breaks_theorem_4_3_on_transactional_intents(
    report: TheoremReport,
) -> None:
    assert report.fails("phi_hidden_deny") == in_schema_order(report, TRANSACTIONAL, OPTIONAL_ONLY)


def test_what_an_mcp_caller_sees_depends_on_the_annotations(report: TheoremReport) -> None:
    """Plain Φ through MCP with mcp_policy=hints asks for every tool (readOnlyHint absent
    = false): right for the 24 transactional intents only. Φ with annotations: all 53 but the
    two whose optional-only slots can fail validation."""
    assert report.holds["phi_mcp_hints_observable"] == TRANSACTIONAL
    assert report.fails("phi_annotated_hints_observable") == OPTIONAL_ONLY
    assert report.count("unphi_phi_annotated_recovers_t") == 53


def test_round_trips(report: TheoremReport) -> None:
    assert report.count("unphi_plus_phi_plus_id") == 53
    assert report.count("phi_plus_unphi_plus_id") == 53
    assert report.count("unphi_phi_id") == 0
    assert report.count("unphi_phi_id_except_t") == 53


def test_unphi_reports_unknowns_and_never_defaults(services: tuple[Service, ...]) -> None:
    transfer = services[0].intents[1]
    back = unphi(phi(transfer))
    assert back.transactional is UNKNOWN
    assert back.unknown == ("transactional", "failure_modes", "dependencies")
    with pytest.raises(ValueError, match="unknown"):
        back.intent()
    assert back.intent(transactional=True) == transfer
    # a naive client that reads a missing flag as false breaks exactly the transactional ones
    naive = [
        i.qualified_name
        for s in services
        for i in s.intents
        if unphi(phi(i)).intent(transactional=False) != i
    ]
    assert tuple(naive) == TRANSACTIONAL


def test_theorem_5_7_two_intents_differing_only_in_t() -> None:
    s1, s2 = BOOK, replace(BOOK, transactional=False)
    assert phi(s1) == phi(s2)
    assert bisimilar(tool_lts(phi(s1)), tool_lts(phi(s2))).equivalent
    l1 = relabel(intent_lts(s1), action_equivalence)
    l2 = relabel(intent_lts(s2), action_equivalence)
    observed = bisimilar(l1, l2)
    assert not observed.equivalent
    assert observed.distinction is not None and "approve(BookTrain)" in observed.distinction.trace
    assert bisimilar(hide_approval(l1), hide_approval(l2)).equivalent
    assert phi_plus(s1) != phi_plus(s2)


def test_unphi_plus_checks_write_approval_and_the_image() -> None:
    plus = phi_plus(BOOK)
    assert unphi_plus(plus).intent() == BOOK
    bad = replace(plus, requires_approval=False)
    notes = unphi_plus(bad).notes
    assert any("violates WriteApproval" in n for n in notes)
    assert any("requires_approval" in n and "outside" in n for n in notes)
    undeclared = replace(plus, side_effects=None, failure_modes=None)
    back = unphi_plus(undeclared)
    assert back.transactional is UNKNOWN and back.failure_modes is UNKNOWN


def test_unphi_of_a_foreign_tool_notes_what_is_lossy() -> None:
    tool = Tool(
        "add",
        "Adds two numbers",
        {"type": "object", "required": ["a", "z"], "properties": {"a": {"type": "number"}}},
    )
    back = unphi(tool)
    assert back.service is UNKNOWN
    assert any("type 'number'" in n for n in back.notes)
    assert any("'z' has no property" in n for n in back.notes)


def test_phi_services_variants_and_grouping(services: tuple[Service, ...]) -> None:
    plain = phi_services(services)
    annotated = phi_services(services, annotations=True)
    plus = phi_services(services, plus=True, annotations=True)
    assert len(plain) == len(annotated) == len(plus) == 53
    assert all(isinstance(t, Tool) and t.annotations is None for t in plain)
    assert all(isinstance(t, ToolPlus) and t.annotations is not None for t in plus)
    groups = unphi_services(plain)
    assert [g.name for g in groups] == [s.name for s in services]
    assert phi_annotated(services[0].intents[0]).annotations is not None


def test_intent_tool_bisimilar_distinguishes_on_the_gate(services: tuple[Service, ...]) -> None:
    transfer = services[0].intents[1]
    result = intent_tool_bisimilar(transfer, phi(transfer))
    assert result.distinction is not None
    assert result.distinction.trace == (
        "call(Banks_1__TransferMoney)",
        "approve(Banks_1__TransferMoney)",
    )


def test_theorem_7_1_2_fails_exactly_for_recovery_branches_and_optional_only_inputs() -> None:
    """T ~ (Φ⁺)⁻¹(T) (paper Theorem 7.1.2) on scenarios/train_booking.yaml: false for the three
    tools whose failure modes recover by Retry/UserPrompt/Fallback (the trace ends in an error
    type the recovered intent cannot have) and for the two whose only input is optional and
    typed (``booking_id``: the tool can fail validation, the intent has no MissingSlots); true
    for ``use_cached_data`` (a required input, every failure aborts)."""
    from sim.calculus.theorems import tool_unphi_plus_bisimilar
    from sim.scenario import load_scenario

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios/train_booking.yaml")
    verdicts = {}
    for spec in scenario.tools:
        tool = tool_plus_from_mapping(spec.model_dump(mode="json", exclude_none=True))
        result = tool_unphi_plus_bisimilar(tool)
        verdicts[tool.name] = result.equivalent
        recovers = any(fm.recovery != Abort() for fm in tool.failure_modes or ())
        schema = tool.input_schema or {}
        optional_only = not schema.get("required") and bool(schema.get("properties"))
        assert result.equivalent is not (recovers or optional_only), tool.name
        if not result.equivalent:
            assert result.distinction is not None
            trace = result.distinction.trace
            assert trace[-1].startswith(f"error({tool.name},")
            if optional_only:
                assert trace == (f"call({tool.name})", f"error({tool.name},ValidationError)")
    assert sorted(n for n, ok in verdicts.items() if not ok) == [
        "book_train",
        "check_balance",
        "fetch_user",
        "print_ticket",
        "send_ticket",
    ]


_TYPES = st.sampled_from([None, "string", "integer", "boolean"])


@st.composite
def input_schemas(draw: st.DrawFn) -> dict[str, object]:
    """Input schemas with optional-only, enum-only, type-only and unconstrained properties."""
    props: dict[str, object] = {}
    for name in draw(st.lists(_NAMES, max_size=4, unique=True)):
        prop: dict[str, object] = {"description": f"The {name}."}
        kind = draw(_TYPES)
        if kind is not None:
            prop["type"] = kind
        if draw(st.booleans()):
            prop["enum"] = draw(st.lists(_NAMES, min_size=1, max_size=3, unique=True))
        props[name] = prop
    required = draw(st.lists(st.sampled_from(sorted(props) or ["x"]), max_size=2, unique=True))
    schema: dict[str, object] = {"type": "object", "properties": props}
    if props and required:
        schema["required"] = [r for r in required if r in props]
    return schema


@given(input_schemas(), st.booleans())
@settings(max_examples=60, deadline=None)
def test_a_validation_error_is_offered_iff_an_input_is_constrained(
    schema: dict[str, object], declared: bool
) -> None:
    """Predicted from JSON Schema, not from the code: some argument violates the schema iff a
    name is required or a property has a ``type`` or an ``enum`` (an ``enum`` alone rejects
    any other value, a ``type`` any other type); a ValidationError failure mode opens the
    branch too. The SGD dialect never validates."""
    from sim.calculus.mcp import FailureMode, validates

    props = schema["properties"]
    assert isinstance(props, dict)
    constrained = bool(schema.get("required")) or any(
        "type" in p or "enum" in p for p in props.values()
    )
    modes = (FailureMode("ValidationError", Abort()),) if declared else ()
    tool = ToolPlus("t", "Does t.", schema, failure_modes=modes)
    lts = tool_lts(tool)
    after_call = lts.step(lts.initial, "call(t)")
    assert after_call is not None
    offered = any(lab == "error(t,ValidationError)" for lab, _ in lts.enabled(after_call))
    assert validates(schema) is constrained
    assert offered is (constrained or declared)
    sgd = tool_lts(tool, dialect="sgd")
    assert all("ValidationError" not in t.label for t in sgd.transitions)


def test_the_validation_branch_fails_on_an_unconstrained_schema_only() -> None:
    """The named cases: an optional enum, an optional type, no constraint at all."""
    from sim.calculus.mcp import validates

    assert validates({"properties": {"class": {"enum": ["economy", "business"]}}})
    assert validates({"properties": {"booking_id": {"type": "string"}}})
    assert validates({"required": ["x"]})
    assert not validates({"type": "object", "properties": {"note": {"description": "Free."}}})
    assert not validates({})


@pytest.mark.parametrize(
    ("side_effects", "transactional"),
    [("write", True), ("delete", True), ("read", False), ("none", False), (None, UNKNOWN)],
)
def test_unphi_plus_sets_t_from_side_effects(
    side_effects: str | None, transactional: object
) -> None:
    """(Φ⁺)⁻¹ reads t = side_effects ∈ {write, delete}: ``none`` (no effect) is not
    transactional, like ``read``; no side_effects leaves t unknown (never a default)."""
    entry: dict[str, object] = {"name": "S__t", "description": "d.", "input_schema": {}}
    if side_effects is not None:
        entry["side_effects"] = side_effects
    assert unphi_plus(tool_plus_from_mapping(entry)).transactional == transactional


# --- adversarial schemas: the theorems' verdicts predicted independently (issue 15 item 7) --

_NAMES = st.sampled_from(["city", "date", "time", "party_size", "price", "name", "seats"])


@st.composite
def adversarial_services(draw: st.DrawFn) -> tuple[Service, ...]:
    """Services whose intents may have only optional slots, categorical (enum) and free slots,
    either transactional flag, result slots, and intent names repeated across services."""
    services = []
    for k in range(draw(st.integers(1, 3))):
        names = draw(st.lists(_NAMES, min_size=1, max_size=5, unique=True))
        # a categorical slot has values (as in SGD): one without any has no `enum` under Φ
        # and comes back non-categorical, so (Φ⁺)⁻¹ ∘ Φ⁺ ≠ id there (found by this test)
        slots = tuple(
            Slot(n, f"The {n}.", cat, tuple(draw(st.lists(_NAMES, min_size=cat, max_size=2))))
            for n in names
            for cat in [draw(st.booleans())]
        )
        intents = []
        for j, iname in enumerate(
            draw(
                st.lists(
                    st.sampled_from(["Find", "Reserve", "Buy"]), min_size=1, max_size=3, unique=True
                )
            )
        ):
            chosen = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
            cut = draw(st.integers(0, len(chosen)))  # cut = 0: optional slots only
            by = {s.name: s for s in slots}
            intents.append(
                Intent(
                    iname,
                    f"{iname} things. Second sentence {j}.",
                    tuple(by[n] for n in chosen[:cut]),
                    tuple(by[n] for n in chosen[cut:]),
                    draw(st.booleans()),
                    (),
                    tuple(
                        by[n]
                        for n in draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
                    ),
                    f"Svc_{k}",
                )
            )
        services.append(Service(f"Svc_{k}", "A service.", slots, tuple(intents)))
    return tuple(services)


@given(adversarial_services())
@settings(max_examples=25, deadline=None)
def test_theorem_verdicts_match_their_independent_prediction(services: tuple[Service, ...]) -> None:
    """Predicted from the paper's argument, not from the code. Errors first: MCP validation
    (§4.4 MCP-Validate-Err) can reject an argument whenever the schema constrains an input,
    and Φ gives every slot a ``type`` (``string``, categorical ones an ``enum``), so Φ(S) can
    fail validation iff S has a slot; SGD's only input error, MissingSlots, needs a required
    slot. The error behaviours match iff S has a required slot or no slot at all ("matched").
    Then, on matched intents: with approval observable, S ~ Φ(S) iff S is not transactional
    (Φ drops t, so the gate is lost: Theorem 5.7); an MCP caller deciding from absent hints
    asks for every tool, so S ~ Φ(S) seen through MCP iff S is transactional; Φ_ann's hints
    carry t; Φ⁺ keeps the gate (Theorem 7.1.1); a granting hidden approver makes S ~ Φ(S).
    The round trips do not look at the LTS: (Φ⁺)⁻¹ ∘ Φ⁺ = id (7.1.3) for every intent, and
    Φ⁻¹ ∘ Φ never recovers t."""
    report = theorem_report(services)
    intents = [i for s in services for i in s.intents]
    names = tuple(i.qualified_name for i in intents)
    matched = {i.qualified_name for i in intents if i.required or not i.optional}
    transactional = {i.qualified_name for i in intents if i.transactional}

    def where(*conditions: set[str]) -> tuple[str, ...]:
        return tuple(n for n in names if all(n in c for c in conditions))

    plain = set(names) - transactional
    assert report.holds["phi_observable"] == where(matched, plain)
    assert report.holds["phi_mcp_hints_observable"] == where(matched, transactional)
    assert report.holds["phi_hidden_deny"] == where(matched, plain)
    for check in (
        "phi_hidden",
        "phi_plus_hidden",
        "phi_plus_observable",
        "phi_annotated_hints_observable",
    ):
        assert report.holds[check] == where(matched), check
    assert report.holds["unphi_plus_phi_plus_id"] == names
    assert report.holds["phi_plus_unphi_plus_id"] == names
    assert report.holds["unphi_phi_id"] == ()
    assert report.holds["unphi_phi_id_except_t"] == names

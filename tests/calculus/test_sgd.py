"""The SGD calculus: loading the real schema, its pitfalls, and the LTS of an intent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sim.calculus.lts import accepts
from sim.calculus.sgd import (
    SchemaError,
    Service,
    intent_lts,
    load_schema,
    services_from_json,
    services_to_json,
)


@pytest.fixture(scope="module")
def schema_json(shared_data: Path) -> Any:
    return json.loads((shared_data / "sgd" / "train" / "schema.json").read_text())


@pytest.fixture(scope="module")
def services(shared_data: Path) -> tuple[Service, ...]:
    return load_schema(shared_data / "sgd" / "train" / "schema.json")


def test_train_schema_counts(services: tuple[Service, ...]) -> None:
    intents = [i for s in services for i in s.intents]
    assert len(services) == 26
    assert len(intents) == 53
    assert sum(i.transactional for i in intents) == 24
    assert sum(len(s.slots) for s in services) == 215


def test_dontcare_is_not_a_default(services: tuple[Service, ...]) -> None:
    hotels = next(s for s in services if s.name == "Hotels_1")
    search = next(i for i in hotels.intents if i.name == "SearchHotel")
    assert {s.name for s in search.optional} == {"number_of_rooms", "has_wifi", "star_rating"}
    assert search.defaults == ()
    reserve = next(i for i in hotels.intents if i.name == "ReserveHotel")
    assert reserve.default("number_of_rooms") == "1"


def test_intent_names_repeat_so_tools_are_prefixed(services: tuple[Service, ...]) -> None:
    names = [i.name for s in services for i in s.intents]
    qualified = [i.qualified_name for s in services for i in s.intents]
    assert len(set(names)) < len(names)
    assert len(set(qualified)) == len(qualified)
    assert "Banks_1__CheckBalance" in qualified


def test_schema_json_round_trip_is_identity(schema_json: Any) -> None:
    assert services_to_json(services_from_json(schema_json)) == schema_json


def test_intent_lts_of_a_transactional_intent(services: tuple[Service, ...]) -> None:
    transfer = services[0].intents[1]
    assert transfer.qualified_name == "Banks_1__TransferMoney" and transfer.transactional
    lts = intent_lts(transfer)
    n = transfer.qualified_name
    happy = [
        f"invoke({n})",
        "collect(account_type)",
        "collect(amount)",
        "collect(recipient_account_type)",
        "collect(recipient_account_name)",
        f"confirm({n})",
        f"execute({n})",
        f"result({n})",
    ]
    assert accepts(lts, happy, weak=False)
    assert accepts(lts, [f"invoke({n})", f"error({n},MissingSlots)", f"abort({n})"], weak=False)
    no_confirm = [lab for lab in happy if not lab.startswith("confirm")]
    assert not accepts(lts, no_confirm, weak=False)
    assert accepts(lts, [*happy[:5], f"deny({n})"], weak=False)


def test_intent_lts_of_an_intent_without_required_slots(services: tuple[Service, ...]) -> None:
    lookup = next(i for s in services for i in s.intents if i.name == "LookupSong")
    assert not lookup.required and not lookup.transactional
    lts = intent_lts(lookup)
    n = lookup.qualified_name
    assert accepts(lts, [f"invoke({n})", f"execute({n})", f"result({n})"], weak=False)
    assert not any("MissingSlots" in t.label for t in lts.transitions)


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d[0].pop("service_name"), "$[0].service_name"),
        (lambda d: d[0]["intents"][1]["required_slots"].append("nope"), "required_slots[3]"),
        (
            lambda d: d[0]["intents"][1]["optional_slots"].update({"amount": 5}),
            "$[0].intents[1].optional_slots.amount",
        ),
        (lambda d: d[0]["slots"][0].update(is_categorical="yes"), "$[0].slots[0].is_categorical"),
        (lambda d: d.__setitem__(0, 7), "$[0]"),
    ],
)
def test_bad_schema_names_the_json_path(schema_json: Any, mutate: Any, path: str) -> None:
    data = json.loads(json.dumps(schema_json))
    mutate(data)
    with pytest.raises(SchemaError) as info:
        services_from_json(data)
    assert path in str(info.value)


def test_a_schema_must_be_a_list() -> None:
    with pytest.raises(SchemaError, match=r"\$: expected a list"):
        services_from_json({"services": []})

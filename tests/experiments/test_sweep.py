"""--set parsing, the sweep: block, and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.experiments.sweep import SweepError, expand, load_points, parse_path, parse_set
from sim.scenario import ScenarioError, load_scenario, parse_scenario

SMALL = (Path(__file__).parents[1] / "fixtures" / "scenarios" / "small_mesh.yaml").read_text(
    encoding="utf-8"
)


def test_parse_set() -> None:
    s = parse_set("routing.loss_penalty=0.5,1,2")
    assert s.path == ("routing", "loss_penalty") and s.values == (0.5, 1, 2)
    assert parse_set("failures.0.for=60,300").path == ("failures", 0, "for")
    assert parse_set("routers=[dijkstra, bfs],[resilient]").values == (
        ["dijkstra", "bfs"],
        ["resilient"],
    )
    assert parse_set("description='a, b'").values == ("a, b",)
    assert parse_path("links.2.latency.MCP+") == ("links", 2, "latency", "MCP+")
    for bad in ("nothing", "a..b=1", "a=1,,2"):
        with pytest.raises(SweepError):
            parse_set(bad)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_cli_lists_make_a_cross_product(tmp_path: Path) -> None:
    file = _write(tmp_path, SMALL)
    base = load_scenario(file)
    points = expand(
        base,
        [
            parse_set("routing.loss_penalty=0.5,1"),
            parse_set("failures.0.for=60,300"),
            parse_set("duration=200"),
        ],
    )
    assert [p.id for p in points] == ["p0", "p1", "p2", "p3"]
    assert points[3].params == {"routing.loss_penalty": 1, "failures.0.for": 300}
    loaded, _ = load_points(file, base, points)
    scn = loaded[3][1]
    assert scn.routing.loss_penalty == 1 and scn.failures[0].for_ == 300
    assert scn.duration == 200


def test_no_list_means_no_points(tmp_path: Path) -> None:
    file = _write(tmp_path, SMALL)
    points = expand(load_scenario(file), [parse_set("routing.loss_penalty=2")])
    assert len(points) == 1 and points[0].id is None


def test_sweep_block_product_and_points(tmp_path: Path) -> None:
    product = (
        SMALL
        + "sweep:\n  parameters: {routing.loss_penalty: [0.5, 1], failures.0.for: [60, 300]}\n"
    )
    file = _write(tmp_path, product)
    base = load_scenario(file)
    points = expand(base, [])
    assert len(points) == 4
    loaded, _ = load_points(file, base, points)
    assert all(s.sweep is None for _, s in loaded)
    zipped = SMALL + (
        "sweep:\n  mode: points\n  parameters: {routing.loss_penalty: [0.5, 1], "
        "failures.0.for: [60, 300]}\n"
    )
    assert [p.params for p in expand(load_scenario(_write(tmp_path, zipped)), [])] == [
        {"routing.loss_penalty": 0.5, "failures.0.for": 60},
        {"routing.loss_penalty": 1, "failures.0.for": 300},
    ]
    listed = (
        SMALL
        + "sweep:\n  mode: points\n  points:\n"
        + "    - {duration: 100}\n    - {duration: 200, seed: 3}\n"
    )
    points = expand(
        load_scenario(_write(tmp_path, listed)), [parse_set("routing.loss_penalty=1,2")]
    )
    assert len(points) == 4
    assert points[1].params == {"duration": 100, "routing.loss_penalty": 2}


def test_bad_sweep_value_is_located_at_the_sweep_block(tmp_path: Path) -> None:
    text = SMALL + "sweep:\n  parameters:\n    routing.loss_penalty: [1, -3]\n"
    file = _write(tmp_path, text)
    base = load_scenario(file)
    with pytest.raises(ScenarioError) as info:
        load_points(file, base, expand(base, []))
    (diag,) = info.value.errors
    line = text.splitlines().index("    routing.loss_penalty: [1, -3]") + 1
    assert diag.line == line
    assert diag.field == "routing.loss_penalty"
    assert "must be ≥ 0" in diag.message and "sweep routing.loss_penalty=-3" in diag.message


def test_bad_set_path_is_a_located_error(tmp_path: Path) -> None:
    file = _write(tmp_path, SMALL)
    base = load_scenario(file)
    with pytest.raises(ScenarioError) as info:
        load_points(file, base, expand(base, [parse_set("failures.4.for=1,2")]))
    assert "index 4 is out of range" in str(info.value)
    with pytest.raises(ScenarioError) as info:
        load_points(file, base, expand(base, [parse_set("routing.loss_penaty=1,2")]))
    assert "did you mean 'loss_penalty'" in str(info.value)
    assert str(info.value).startswith(str(file))


def test_sweep_block_shape_errors() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SMALL + "sweep: {mode: points, parameters: {a.b: [1, 2], c: [1]}}\n")
    assert "equal lengths" in str(info.value)
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SMALL + "sweep: {parameters: {name: [a, b]}}\n")
    assert "cannot sweep 'name'" in str(info.value)
    with pytest.raises(ScenarioError):
        parse_scenario(SMALL + "sweep: {}\n")

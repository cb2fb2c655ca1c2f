"""The page's section "simulation against the live mesh": ``against.json`` (written by
``compare --against``) as HTML tables, in the Results tab, drawn here (not by the
script), so that the page shows it as it is written."""

from __future__ import annotations

import html
from typing import Any

#: what ``compare --against`` writes beside ``summary.json`` (sim.experiments.against)
AGAINST_FILE = "against.json"
TITLE = "simulation against the live mesh"
#: the element of ``body.html`` the section replaces
SLOT = '<div id="against"></div>'


def _num(x: Any) -> str:
    """A number as ``report.md`` shows it (``–`` for None)."""
    if x is None:
        return "–"
    value = float(x)
    if value == int(value) and abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}"


def cells(row: dict[str, Any]) -> list[str]:
    """A metric's row of ``against.json`` as text, for the page and ``report.md`` alike:
    simulated ``mean [lo, hi]``, live (each run's value in parentheses when several),
    relative error (with live 0, the difference), ``outside`` or nothing."""
    sim = row["simulated"]
    shown = _num(sim["mean"])
    if sim["mean"] is not None and sim["interval"] is not None:
        shown += f" [{_num(sim['interval'][0])}, {_num(sim['interval'][1])}]"
    live = _num(row["live"])
    if len(row["live_runs"]) > 1 and row["live"] is not None:
        live += " (" + ", ".join(_num(v) for v in row["live_runs"]) + ")"
    if row["relative_error"] is not None:
        error = f"{100 * row['relative_error']:.3g} %"
    elif row["difference"] == 0:
        error = "– (both 0)"
    elif row["difference"] is not None:
        error = f"– (live 0; difference {_num(row['difference'])})"
    else:
        error = "–"
    return [shown, live, error, "outside" if row["within_interval"] is False else ""]


#: the sentences on the routers of one side only, by ``left_out`` key
LEFT_OUT = {
    "live_only": "Live only, not simulated",
    "simulated_only": "Simulated only, no live run",
}
#: the columns of a router's table
HEADER = ("metric", "unit", "simulated", "live", "relative error", "")


def ordered(table: dict[str, Any], router: str) -> list[str]:
    """The metrics of ``router`` in the summary's order (``metrics``)."""
    rows = table["routers"][router]
    return [m for m in table["metrics"] if m in rows]


def duration_sentence(table: dict[str, Any]) -> str:
    """How long the live runs and the simulation lasted."""
    dur = table["duration"]
    if dur["file"] == dur["live"]:
        return (
            f"Each lasted {dur['live']:g} s of scenario time; "
            "the simulation ran as long (the file's duration)."
        )
    return (
        f"Each lasted {dur['live']:g} s of scenario time; the file says {dur['file']:g} s: "
        f"the simulation ran {dur['simulated']:g} s (as with --set duration={dur['live']:g}), "
        "so that counts compare."
    )


def against_html(table: dict[str, Any]) -> str:
    """The section's HTML for the comparison ``table`` (``against.json``'s object)."""
    e = html.escape
    runs = "; ".join(
        f"{router}: {', '.join(r['run'] for r in rs)}" for router, rs in table["live_runs"].items()
    )
    parts = [
        f"<h2>{TITLE}</h2>",
        f'<p class="hint">Live runs ({e(runs)}). {e(duration_sentence(table))} Simulated: '
        f"the mean over {table['replications']} replication(s) [95 % interval]; live: the "
        "mean of the live runs (each in parentheses); relative error |simulated − live| / "
        "|live|; <b>outside</b>: the live value lies outside the simulated interval.</p>",
    ]
    for key, what in LEFT_OUT.items():
        if table["left_out"][key]:
            parts.append(f"<p>{what}: {e(', '.join(table['left_out'][key]))}.</p>")
    for router in sorted(table["routers"]):
        rows = table["routers"][router]
        parts.append(f"<h3>{e(router)}</h3><table><tr>")
        parts += [f"<th>{c}</th>" for c in HEADER]
        parts.append("</tr>")
        for name in ordered(table, router):
            shown = [name, rows[name]["unit"], *cells(rows[name])]
            flag = ' class="outside"' if shown[-1] else ""
            parts.append(
                f'<tr{flag}><td style="text-align:left">'
                + "</td><td>".join(e(c) for c in shown)
                + "</td></tr>"
            )
        parts.append("</table>")
    return '<div id="against">' + "".join(parts) + "</div>"

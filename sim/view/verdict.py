"""The page's Verdict tab: ``summary.json``'s ``verdict`` (sim.experiments.verdict) drawn
here as written (not by the script): which router is better on which metric, why, and
every metric side by side. The page opens on it when there is one."""

from __future__ import annotations

import html
from typing import Any

#: the element of ``body.html`` the tab replaces
SLOT = '<div id="verdict"></div>'


def _point_html(point: dict[str, Any]) -> str:
    e = html.escape
    out = []
    if point.get("point") is not None:
        shown = ", ".join(f"{k} = {v!r}" for k, v in point["params"].items())
        out.append(f"<h3>point {e(str(point['point']))}: {e(shown)}</h3>")
    out.append('<ul class="verdict">')
    out += [f"<li>{e(s)}</li>" for s in point["sentences"]]
    out.append('</ul><h3>Why</h3><ul class="why">')
    out += [f'<li data-router="{e(r)}"><b>{e(r)}</b>: {e(t)}</li>' for r, t in point["why"].items()]
    out.append('</ul><h3>Side by side</h3><table class="side"><thead><tr>')
    out += [f"<th>{e(c)}</th>" for c in point["table"]["columns"]]
    out.append("</tr></thead><tbody>")
    for row in point["table"]["rows"]:
        out.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def verdict_html(summary: dict[str, Any]) -> str:
    """The Verdict tab's element for ``summary`` (the slot's ``div``, filled); the slot
    as it is when the summary has no verdict."""
    points = summary.get("verdict")
    if not isinstance(points, list):
        return SLOT
    routers = ", ".join(str(r) for r in summary.get("routers", []))
    head = (
        f"<h2>Verdict</h2><p>{html.escape(routers)}: {summary.get('replications')} "
        "replication(s) each on the same seeds; means with the 95 % confidence interval "
        "(Student t) in brackets.</p>"
    )
    return '<div id="verdict">' + head + "".join(_point_html(p) for p in points) + "</div>"

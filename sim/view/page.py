"""Assemble the explorer: one self-contained HTML file (inline style, script and data;
no network when opened, works from ``file://``). Same index → byte-identical page."""

from __future__ import annotations

import html
import json
import re
import secrets
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.view.against import SLOT, against_html
from sim.view.data import DEFAULT_BUDGET, Ahead, Budget, Encoded, build_index
from sim.view.verdict import SLOT as VERDICT_SLOT
from sim.view.verdict import verdict_html

if TYPE_CHECKING:
    from sim.scenario import Scenario


def _static(name: str) -> str:
    return resources.files("sim.view").joinpath("static", name).read_text(encoding="utf-8")


def encode_index(index: dict[str, Any]) -> str:
    """``index`` as JSON (sorted keys, no spaces, ASCII), each :class:`Encoded` value
    spliced in as its text: the bytes of the same index holding plain lists."""
    texts: list[str] = []
    mark = f"\x00{secrets.token_hex(8)}:"  # no string of the data holds it

    def splice(value: Any) -> str:
        if not isinstance(value, Encoded):
            raise TypeError(f"{type(value).__name__} is not JSON serializable")
        texts.append(value.text)
        return f"{mark}{len(texts) - 1}"

    data = json.dumps(
        index, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=splice
    )
    if not texts:
        return data
    quoted = re.escape(json.dumps(mark)[:-1])
    return re.sub(quoted + r'(\d+)"', lambda m: texts[int(m.group(1))], data)


def render_page(index: dict[str, Any], title: str) -> str:
    """The HTML text of the explorer for ``index`` (from :func:`build_index`)."""
    data = encode_index(index).replace("</", "<\\/")  # no "</script>" inside the data block
    body = _static("body.html")
    if index.get("against"):  # drawn here, in the Results tab
        body = body.replace(SLOT, against_html(index["against"]))
    if index.get("summary"):  # drawn here, the tab the page opens on
        body = body.replace(VERDICT_SLOT, verdict_html(index["summary"]))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<style>{_static('view.css')}</style></head>\n<body>"
        f"{body}"
        f'<script type="application/json" id="protomesh-data">{data}</script>\n'
        f"<script>{_static('view.js')}</script>\n</body></html>\n"
    )


def write_page(
    target: Path,
    out: Path,
    scenario: Path | Scenario | None = None,
    budget: Budget = DEFAULT_BUDGET,
    ahead: Ahead | None = None,
    only: Sequence[Path] | None = None,
) -> dict[str, Any]:
    """Build the index of ``target`` (a results folder or a trace) and write the page to
    ``out``; return the index's sampling note. ``ahead``: what was built or read for it
    already (:class:`~sim.view.data.Ahead`); ``only``: the run directories to show
    (default: every trace under ``target``)."""
    index = build_index(target, scenario, budget, ahead, only)
    name = (index.get("summary") or {}).get("scenario") or target.name
    text = render_page(index, f"protomesh · {name}")
    from sim.atomic import write_atomic

    write_atomic(out, text)  # whole or not at all (StorageError: the path and the reason)
    sampling: dict[str, Any] = index["sampling"]
    return sampling

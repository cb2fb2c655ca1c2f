"""The scenario with the fitted values: the file's own YAML as data, the fitted entries
replaced, everything else kept, a comment header naming the traces and the date.

Replaced: ``links[i].latency[p]`` (the link's ``jitter`` is dropped when a latency becomes
a distribution: the distribution is the whole crossing), ``tools[j].service_time`` and
``errors``, ``agents[k].translation_delay``, ``approval.latency`` and
``grant_probability``. YAML anchors and merge keys are written out expanded (each entry
its own values); comments are not kept (the header says where the original is). The
date is today's (UTC), or ``SOURCE_DATE_EPOCH``'s when it is set. The editor's schema
comment of the original's first line is kept, its path made relative to the output.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from sim.calibrate.calibration import Calibration, Result

#: The first line an editor reads the schema from (kept when the original has it).
SCHEMA_COMMENT = "# yaml-language-server:"


class _Dumper(yaml.SafeDumper):
    """Every value written where it stands (no anchors for values met twice)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def today() -> datetime.date:
    """The date the header names: ``SOURCE_DATE_EPOCH``'s if set, else today (UTC)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip().isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date()
    return datetime.datetime.now(datetime.UTC).date()


def calibrated_yaml(
    cal: Calibration, traces: Sequence[str], report: str | None, out: Path | None = None
) -> str:
    """The scenario's YAML with every fitted value of ``cal`` written in; the header
    names ``traces``, the date and the ``report`` folder. Written to ``out``, the
    original's schema comment points at the same schema from there."""
    data = _plain(cal.source.data)
    dropped: list[str] = []
    for result in cal.results:
        if result.written is not None and result.path is not None:
            _put(data, result, dropped)
    fitted = sum(1 for r in cal.results if r.written is not None)
    lines = []
    first = cal.source.text.split("\n", 1)[0]
    if first.startswith(SCHEMA_COMMENT):
        lines.append(_schema_from(first, Path(cal.source.name), out))
    lines.append(f"# Calibrated by `python -m sim calibrate` on {today().isoformat()} from")
    lines.extend(f"#   {t}" for t in traces)
    lines.append(
        f"# {fitted} of {len(cal.results)} measured quantities written"
        + (f" (the fit report: {report})" if report else "")
        + f"; everything else is {cal.source.name}'s."
    )
    lines.extend(f"# {d}" for d in dropped)
    body = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None,
        width=100,
    )
    return "\n".join(lines) + "\n" + body


def _schema_from(comment: str, source: Path, out: Path | None) -> str:
    """The schema comment of ``source`` as a file at ``out`` reads it (a relative path
    made relative to ``out``'s folder; a URL, or printing to stdout, keeps it)."""
    head, sep, target = comment.partition("$schema=")
    if not sep or out is None or "://" in target or Path(target).is_absolute():
        return comment
    schema = (source.parent / target).resolve()
    return f"{head}$schema={os.path.relpath(schema, out.parent.resolve())}"


def _put(data: dict[str, Any], result: Result, dropped: list[str]) -> None:
    """Write ``result.written`` at its path (creating ``approval:`` when absent)."""
    path = result.path
    assert path is not None
    node: Any = data
    for part in path[:-1]:
        if isinstance(part, str) and part not in node:
            node[part] = {}
        node = node[part]
    node[path[-1]] = result.written
    if result.kind == "link" and isinstance(result.written, dict):
        link = data["links"][path[1]]
        jitter = link.pop("jitter", None)
        if jitter:
            dropped.append(
                f"links[{path[1]}].jitter ({jitter:g} s) dropped: its {path[3]} latency is now "
                "a distribution (its other numeric latencies now have no jitter)"
            )


def _plain(value: Any) -> Any:
    """A copy of YAML data sharing nothing (an alias's value copied where it stands)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value

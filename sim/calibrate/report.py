"""The fit report: ``fit.json`` (every measured quantity: its samples, each family's
parameters, log-likelihood, KS distance and p-value, the chosen family, fitted or kept),
``fit.md`` (the same as a table) and one PNG per fitted duration (the samples' histogram
and empirical CDF under the chosen law's density and CDF). Deterministic: no time, no
path but the ones given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sim.calibrate import fit as fitting
from sim.calibrate.calibration import Calibration, Result


def report_json(cal: Calibration, traces: Sequence[str]) -> dict[str, Any]:
    """``fit.json``'s content."""
    return {
        "scenario": cal.source.name,
        "traces": list(traces),
        "events": cal.measured.events,
        "min_samples": cal.min_samples,
        "rules": {
            "families": list(fitting.FAMILIES),
            "choice": "maximum likelihood per family, then the lowest KS distance; a gamma "
            "not told from its shape-1 case by the likelihood ratio is the exponential; "
            "no family with KS p-value >= ks_alpha: the sample's quantiles (empirical)",
            "ks_alpha": fitting.KS_ALPHA,
            "lr_critical": fitting.LR_CRITICAL,
            "quantile_levels": list(fitting.LEVELS),
            "constant_cv": fitting.CONSTANT_CV,
            "resolution_s": fitting.RESOLUTION,
        },
        "notes": cal.measured.notes(),
        "quantities": [_quantity(r, k) for k, r in enumerate(cal.results)],
    }


def plot_name(index: int, result: Result) -> str:
    """The PNG of a result: its position and key, in characters safe in a file name."""
    return f"{index:02d}-{re.sub(r'[^A-Za-z0-9.+-]+', '-', result.key).strip('-')}.png"


def _quantity(result: Result, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "key": result.key,
        "kind": result.kind,
        "field": result.field,
        "n": result.n,
        "status": result.status,
        "scenario": result.scenario,
        "written": result.written,
    }
    if result.counts:
        out["counts"] = result.counts
    fitted = result.fit
    if fitted is not None:
        out["families"] = {
            f.family: {
                "params": f.params,
                "loglik": f.loglik,
                "ks": f.ks,
                "p": f.p,
                **({"note": f.note} if f.note else {}),
            }
            for f in fitted.families
        }
        out["chosen"] = fitted.chosen
        out["reason"] = fitted.reason
        out["law"] = fitted.entry
        out["plot"] = plot_name(index, result)
    if result.note:
        out["note"] = result.note
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        if "dist" in value:
            params = ", ".join(f"{k} {_cell(v)}" for k, v in value.items() if k != "dist")
            if value["dist"] == "empirical":
                params = f"{len(value.get('quantiles') or value.get('samples') or ())} points"
            return f"{value['dist']} ({params})"
        return ", ".join(f"{k} {_cell(v)}" for k, v in value.items()) or "{}"
    return str(value).replace("|", "\\|")


def report_markdown(content: dict[str, Any]) -> str:
    """``fit.md``: the quantities as a table, then the rules and notes."""
    lines = [
        f"# Calibration of {content['scenario']}",
        "",
        f"{content['events']:,} events from {len(content['traces'])} trace(s): "
        + ", ".join(f"`{t}`" for t in content["traces"])
        + f". Quantities with fewer than {content['min_samples']} samples are kept.",
        "",
        "| quantity | field | n | chosen | KS D | p | scenario | written | status |",
        "|---|---|---:|---|---:|---:|---|---|---|",
    ]
    for q in content["quantities"]:
        family = q.get("families", {}).get(q.get("chosen"), {})
        lines.append(
            "| "
            + " | ".join(
                [
                    _cell(q["key"]),
                    f"`{q['field']}`" if q["field"] else "-",
                    str(q["n"]),
                    q.get("chosen", "-"),
                    _cell(family.get("ks")),
                    _cell(family.get("p")),
                    _cell(q["scenario"]),
                    _cell(q["written"]),
                    q["status"] + (f": {q['note']}" if q.get("note") else ""),
                ]
            )
            + " |"
        )
    rules = content["rules"]
    lines += [
        "",
        f"Choice: {rules['choice']} (ks_alpha {rules['ks_alpha']}, likelihood ratio "
        f"{rules['lr_critical']}, {len(rules['quantile_levels'])} quantiles). A sample whose "
        f"sd/mean is below {rules['constant_cv']:g} or whose range is at most "
        f"{rules['resolution_s']:g} s is constant. Each family's parameters, log-likelihood "
        "and KS test are in `fit.json`; each fit's plot is beside it.",
    ]
    if content["notes"]:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in content["notes"]]
    return "\n".join(lines) + "\n"


def write_report(cal: Calibration, traces: Sequence[str], folder: Path) -> dict[str, Any]:
    """Write ``fit.json``, ``fit.md`` and the plots into ``folder``; return the JSON."""
    from sim.atomic import write_atomic  # each whole or not at all

    content = report_json(cal, traces)
    write_atomic(folder / "fit.json", json.dumps(content, indent=2, ensure_ascii=False) + "\n")
    write_atomic(folder / "fit.md", report_markdown(content))
    for index, result in enumerate(cal.results):
        if result.fit is not None:
            _plot(result, result.samples, folder / plot_name(index, result))
    return content


def _plot(result: Result, samples: Sequence[float], path: Path) -> None:
    """The samples' histogram and ECDF with the chosen law's density and CDF."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.figure import Figure

    assert result.fit is not None
    entry = result.fit.entry
    x = np.sort(np.asarray(samples, dtype=float))
    fig = Figure(figsize=(9, 3.6))
    hist, ecdf = fig.subplots(1, 2)
    hist.hist(x, bins=min(60, max(10, len(x) // 20)), density=True, color="#9ecae1")
    margin = 0.05 * float(x[-1] - x[0]) or 0.05 * float(x[-1]) or 1.0
    grid = np.linspace(max(0.0, float(x[0]) - margin), float(x[-1]) + margin, 400)
    label = _cell(entry)
    pdf = fitting.density(entry, grid)
    if pdf is not None:
        hist.plot(grid, pdf, color="#d62728", label=label)
        hist.legend(fontsize=8)
    hist.set_xlabel("seconds")
    hist.set_ylabel("density")
    ecdf.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color="#3182bd", label="samples")
    ecdf.plot(grid, fitting.cdf(entry, grid), color="#d62728", label=label)
    ecdf.set_xlabel("seconds")
    ecdf.set_ylabel("fraction ≤")
    ecdf.legend(fontsize=8)
    fig.suptitle(f"{result.key}: n = {result.n}, {result.fit.chosen}", fontsize=10)
    fig.tight_layout()
    # tight_layout leaves a placeholder engine behind, which makes savefig lay out and draw
    # the whole figure once more before the drawing it writes (about a third of a plot's
    # time); without an engine the laid-out figure is drawn once, to the same pixels
    fig.set_layout_engine(None)
    fig.savefig(path, format="png", dpi=90, metadata={"Software": None})

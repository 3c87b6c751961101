"""Reports over evaluation folders written by ``homiebot eval --out``.

An evaluation folder holds ``run.json`` (metadata: planner, suite, split, ...; every key optional) and
``results.jsonl`` (one :class:`~homiebot.bench.results.RunResult` per line). From one or more such
folders this module builds a Markdown report laid out like the EMMOE paper's result tables:

1. overall performance, one row per evaluation: SR, PLWSR, TP, SRR, SER (paper table 2);
2. error statistics: each error code's count and share in successful and failed runs, also summed per
   category (appendix H tables), with bar charts of the shares (figure 3);
3. execution success of each action (table 4);
4. success rate per task attribute (table H8).

All numbers come from :mod:`homiebot.bench.metrics`; this module only reads, arranges and draws.
A cell whose denominator is zero (no executed Open, no errors in successful runs, no task with an
attribute) shows "–" instead of a misleading 0.

Charts are drawn with matplotlib's Agg canvas directly (no pyplot, so no display and no global
backend switch), at a fixed size and dpi and without timestamps, so the same input gives the same
bytes. matplotlib is only needed for charts: ``render_markdown`` works without it.

Command line: ``python -m homiebot.bench.report FOLDER [FOLDER ...] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from homiebot.bench import metrics
from homiebot.bench.results import ATTRIBUTES, RunResult, read_results

__all__ = ["ReportError", "load_results", "render_markdown", "render_charts", "write_report", "main"]

DASH = "–"  # shown where a rate has a zero denominator

# The EMMOE error taxonomy, grouped by category in the paper's order.
ERROR_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Format", ("F1", "F2")),
    ("Logical", ("L1", "L2", "L3", "L4")),
    ("Distance", ("D1", "D2")),
    ("Execution", ("E1", "E2")),
)
ERROR_CODES: tuple[str, ...] = tuple(code for _, codes in ERROR_GROUPS for code in codes)
ERROR_MEANING: dict[str, str] = {
    "F1": "action or model not available",
    "F2": "target missing or not recognisable",
    "L1": "hand full for Pick/Open/Close",
    "L2": "nothing (suitable) held for Put",
    "L3": "container closed for Pick/Put",
    "L4": "action does not suit the target",
    "D1": "target out of reach",
    "D2": "target too close for the arm",
    "E1": "skill failed on every attempt",
    "E2": "failed Put dropped the object",
}
ACTIONS: tuple[str, ...] = ("Go to", "Pick", "Put", "Open", "Close")
MAIN_METRICS: tuple[str, ...] = ("SR", "PLWSR", "TP", "SRR", "SER")
CHART_METRICS: tuple[str, ...] = ("SR", "PLWSR", "TP")

DPI = 100
ERROR_FIGSIZE = (9.0, 4.5)
METRICS_FIGSIZE = (8.0, 4.5)


class ReportError(ValueError):
    """An evaluation folder cannot be reported on (missing or empty results)."""


# ----------------------------------------------------------------------------------------- loading


@dataclass
class _Evaluation:
    """One evaluation folder, read once."""

    folder: Path
    meta: dict[str, Any]
    results: list[RunResult]
    skipped: int = 0  # lines that could not be read as a RunResult
    duplicates: int = 0  # repeated (task_id, run) keys, later copies ignored
    label: str = ""
    slug: str = ""
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def metric(self, name: str) -> Any:
        """A metrics function applied to this folder's results, computed once."""
        if name not in self._cache:
            self._cache[name] = getattr(metrics, name)(self.results)
        return self._cache[name]


def _read_meta(folder: Path) -> dict[str, Any]:
    path = folder / "run.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _read(folder: Path | str) -> _Evaluation:
    folder = Path(folder)
    path = folder / "results.jsonl"
    if not path.is_file():
        raise ReportError(f"{folder}: no results.jsonl; is this an evaluation folder from `homiebot eval --out`?")
    read = read_results(path)
    results, skipped, duplicates, first_problem = read.results, read.skipped, read.duplicates, read.first_problem
    if not results:
        detail = f" ({skipped} unreadable line(s); first, {first_problem})" if skipped else ""
        raise ReportError(f"{folder}: results.jsonl holds no complete results{detail}")
    return _Evaluation(folder=folder, meta=_read_meta(folder), results=results, skipped=skipped, duplicates=duplicates)


def load_results(folder: Path | str) -> tuple[dict[str, Any], list[RunResult]]:
    """Read an evaluation folder: (metadata from run.json, results from results.jsonl).

    Tolerant: a missing or unreadable run.json gives empty metadata; lines that do not parse (e.g. a
    last line cut off when the evaluation was killed) are skipped; when a (task_id, run) key appears
    more than once the first copy is kept. Raises :class:`ReportError` when there is no results.jsonl
    or it holds no readable result.
    """
    ev = _read(folder)
    return ev.meta, ev.results


def _slugify(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-").lower()
    return slug[:80] or "evaluation"


def _assign_labels(evals: list[_Evaluation]) -> None:
    """Label = planner name; the folder name is added when labels collide; a number if still needed."""
    for ev in evals:
        planner = ev.meta.get("planner")
        if not isinstance(planner, str) or not planner.strip():
            planner = next((r.planner for r in ev.results if r.planner), "")
        ev.label = planner.strip() or ev.folder.resolve().name or str(ev.folder)
    counts: dict[str, int] = {}
    for ev in evals:
        counts[ev.label] = counts.get(ev.label, 0) + 1
    for ev in evals:
        name = ev.folder.resolve().name
        if counts[ev.label] > 1 and name and name != ev.label:
            ev.label = f"{ev.label} ({name})"
    used: set[str] = set()
    for i, ev in enumerate(evals, 1):
        if ev.label in used:
            ev.label = f"{ev.label} #{i}"
        used.add(ev.label)
    used_slugs: set[str] = set()
    for i, ev in enumerate(evals, 1):
        slug = _slugify(ev.label)
        if slug in used_slugs:
            slug = f"{slug}_{i}"
        used_slugs.add(slug)
        ev.slug = slug


def _load_all(folders: Sequence[Path | str]) -> list[_Evaluation]:
    if not folders:
        raise ReportError("no evaluation folders given")
    evals = [_read(f) for f in folders]
    _assign_labels(evals)
    return evals


# -------------------------------------------------------------------------------------- formatting


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _num(x: Any) -> str:
    return DASH if _missing(x) else f"{float(x):.2f}"


def _pct(x: Any) -> str:
    return DASH if _missing(x) else f"{float(x):.2f}%"


def _cell(text: Any) -> str:
    """Make a value safe for a Markdown table cell."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str) -> list[str]:
    """A Markdown table; align holds one letter per column, 'l' or 'r'."""
    sep = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _meta_text(value: Any, limit: int = 60) -> str:
    if value is None or value == "":
        return DASH
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_groups(ev: _Evaluation) -> list[tuple[str, tuple[str, ...]]]:
    """The taxonomy's categories, plus "Other" for any codes outside it that the metrics counted."""
    counts = ev.metric("error_counts")
    extra: list[str] = []
    for outcome in ("success", "failed"):
        extra += [c for c in counts.get(outcome, {}) if c not in ERROR_CODES and c not in extra]
    return [*ERROR_GROUPS, ("Other", tuple(extra))] if extra else list(ERROR_GROUPS)


def _error_numbers(ev: _Evaluation) -> dict[str, dict[str, Any]]:
    """Per outcome ('success' / 'failed'): counts, shares in percent (None without errors), total."""
    counts = ev.metric("error_counts")
    props = ev.metric("error_proportions")
    codes = [code for _, group in _error_groups(ev) for code in group]
    out: dict[str, dict[str, Any]] = {}
    for outcome in ("success", "failed"):
        c = {code: int(counts.get(outcome, {}).get(code, 0)) for code in codes}
        total = sum(c.values())
        shares = {code: (100.0 * float(props.get(outcome, {}).get(code, 0.0)) if total else None) for code in codes}
        out[outcome] = {"counts": c, "shares": shares, "total": total}
    return out


def _zero_denominators(ev: _Evaluation) -> set[str]:
    """Main-table rates whose denominator is zero: the metrics report 0.0 there, the report shows "–".

    SRR divides by the re-plans of all runs, SER by the runs that end with End; SR, PLWSR and TP by
    the number of runs, which is never zero here.
    """
    out = set()
    replans = getattr(metrics, "replan_count", None)
    if replans is not None and sum(replans(r) for r in ev.results) == 0:
        out.add("SRR")
    ends = getattr(metrics, "ends_with_end", None)
    if ends is not None and not any(ends(r) for r in ev.results):
        out.add("SER")
    return out


def _best(values: list[Any]) -> float | None:
    present = [float(v) for v in values if not _missing(v)]
    return max(present) if len(present) > 1 else None


# --------------------------------------------------------------------------------------- markdown


def _section_evaluations(evals: list[_Evaluation]) -> list[str]:
    rows = []
    for ev in evals:
        m = ev.meta
        notes = []
        if ev.skipped:
            notes.append(f"{ev.skipped} unreadable line(s) skipped")
        if ev.duplicates:
            notes.append(f"{ev.duplicates} duplicate run(s) ignored")
        rows.append([ev.label, f"`{ev.folder.name or ev.folder}`", _meta_text(m.get("suite")), _meta_text(m.get("split")),
                     _meta_text(m.get("runs")), _meta_text(m.get("max_rounds")), _meta_text(m.get("skill_profile")),
                     _meta_text(m.get("created")), "; ".join(notes) or DASH])
    return ["## Evaluations", "",
            *_table(["Label", "Folder", "Suite", "Split", "Runs per task", "Max rounds", "Skill profile", "Created", "Notes"],
                    rows, "llllrrlll"), ""]


def _section_main(evals: list[_Evaluation], links: dict[str, str]) -> list[str]:
    summaries = []
    for ev in evals:
        s = dict(ev.metric("summary"))
        for key in _zero_denominators(ev):
            s[key] = None
        summaries.append(s)
    best = {k: _best([s.get(k) for s in summaries]) for k in MAIN_METRICS}
    rows = []
    for ev, s in zip(evals, summaries):
        row: list[Any] = [ev.label, s.get("runs", len(ev.results)), s.get("tasks", len({r.task_id for r in ev.results}))]
        for k in MAIN_METRICS:
            text = _num(s.get(k))
            if best[k] is not None and not _missing(s.get(k)) and float(s[k]) == best[k]:
                text = f"**{text}**"
            row.append(text)
        rows.append(row)
    lines = ["## 1. Overall performance", "",
             "Success rate (SR), path-length weighted success rate (PLWSR), task progress (TP), success re-plan rate (SRR) "
             "and success end rate (SER), in percent. Runs counts (task, run) pairs; Tasks counts distinct tasks."
             + (" The best value of each column is in bold." if len(evals) > 1 else ""), "",
             *_table(["Model", "Runs", "Tasks", *MAIN_METRICS], rows, "lrrrrrrr"), ""]
    if "metrics" in links:
        lines += [f"![SR, PLWSR and TP per evaluation]({links['metrics']})", ""]
    asking = [(ev, s) for ev, s in zip(evals, summaries) if "ARS" in s or "clear" in s]
    if asking:
        lines += ["Asking, over the tasks whose instruction leaves things open (K > 0, the minimum number of questions) "
                  "only: ask run score ARS = success / (1 + |relevant questions - K| + irrelevant questions), x100 "
                  "averaged over those runs; question ratio QR = (relevant + irrelevant questions) / K averaged over "
                  "those runs (1.0: exactly the questions needed); a question that settles two open things counts as "
                  "two relevant ones. Clear tasks (K = 0) are reported apart: their SR and the questions asked on them, "
                  "every one unnecessary.", "",
                  *_table(["Model", "Ambiguous runs", "SR", "ARS", "QR", "Questions", "Clear runs", "Clear SR",
                           "Unnecessary questions"],
                          [[ev.label, s.get("ambiguous", 0), _asking_num(s, "ambiguous SR"), _asking_num(s, "ARS"),
                            f"{float(s['QR']):.2f}" if "QR" in s else DASH, s.get("questions", DASH), s.get("clear", 0),
                            _asking_num(s, "clear SR"), s.get("unnecessary questions", DASH)] for ev, s in asking],
                          "lrrrrrrrr"), ""]
    return lines


def _asking_num(summary: dict, key: str) -> str:
    return _num(summary.get(key))


def _section_errors(evals: list[_Evaluation], links: dict[str, str]) -> list[str]:
    lines = ["## 2. Error statistics", "",
             "Every failed step carries an error code: format (F1 F2), logical (L1-L4), distance (D1 D2) or execution "
             "(E1 E2). Counts are split by whether the run they occurred in succeeded; a share is the code's part of all "
             "errors in runs with that outcome.", ""]
    if "errors_overview" in links:
        lines += [f"![Error-type shares in successful and failed runs]({links['errors_overview']})", ""]
    for ev in evals:
        nums = _error_numbers(ev)
        s, f = nums["success"], nums["failed"]
        groups = _error_groups(ev)
        rows = []
        for category, codes in groups:
            for i, code in enumerate(codes):
                rows.append([category if i == 0 else "", code, ERROR_MEANING.get(code, "outside the taxonomy"), s["counts"][code], f["counts"][code],
                             _pct(s["shares"][code]), _pct(f["shares"][code])])
        rows.append(["**All**", "", "", s["total"], f["total"], _pct(100.0 if s["total"] else None),
                     _pct(100.0 if f["total"] else None)])
        cat_rows = []
        for category, codes in groups:
            cs, cf = sum(s["counts"][c] for c in codes), sum(f["counts"][c] for c in codes)
            ss = sum(s["shares"][c] for c in codes) if s["total"] else None
            fs = sum(f["shares"][c] for c in codes) if f["total"] else None
            cat_rows.append([category, cs, cf, _pct(ss), _pct(fs)])
        lines += [f"### {ev.label}", "",
                  *_table(["Category", "Code", "Meaning", "Count (successful runs)", "Count (failed runs)",
                           "Share (successful runs)", "Share (failed runs)"], rows, "lllrrrr"), "",
                  *_table(["Category", "Count (successful runs)", "Count (failed runs)", "Share (successful runs)",
                           "Share (failed runs)"], cat_rows, "lrrrr"), ""]
        if f"errors:{ev.slug}" in links:
            lines += [f"![Error-type shares – {ev.label}]({links[f'errors:{ev.slug}']})", ""]
    return lines


def _section_actions(evals: list[_Evaluation]) -> list[str]:
    rows, fail_rows = [], []
    for ev in evals:
        stats = ev.metric("action_success")
        pairs = [tuple(int(v) for v in stats.get(a, (0, 0))) for a in ACTIONS]
        pairs.append((sum(p[0] for p in pairs), sum(p[1] for p in pairs)))
        rows.append([ev.label, *(f"{100.0 * ok / n:.2f}% ({ok}/{n})" if n else DASH for ok, n in pairs)])
        failures = [n - ok for ok, n in pairs[:-1]]
        total = sum(failures)
        fail_rows.append([ev.label, *(f"{100.0 * x / total:.2f}% ({x})" if total else DASH for x in failures), total])
    return ["## 3. Execution success per action", "",
            "Executed steps (those that passed error detection and reached a skill) and how many of them succeeded, "
            "as rate (succeeded/executed).", "",
            *_table(["Model", *ACTIONS, "All"], rows, "l" + "r" * (len(ACTIONS) + 1)), "",
            "How the failed executions divide among the actions, as share (count):", "",
            *_table(["Model", *ACTIONS, "Failed executions"], fail_rows, "l" + "r" * (len(ACTIONS) + 1)), ""]


def _section_attributes(evals: list[_Evaluation]) -> list[str]:
    rows = []
    for ev in evals:
        by_attr = ev.metric("sr_by_attribute")
        row: list[Any] = [ev.label]
        for attr in ATTRIBUTES:
            sr, n = by_attr.get(attr, (None, 0))
            row.append(f"{_num(sr)} ({int(n)})" if n else DASH)
        rows.append(row)
    return ["## 4. Success rate per task attribute", "",
            "SR in percent over the runs of tasks with each attribute (number of runs in parentheses); a task may have "
            "several attributes.", "",
            *_table(["Model", *(a.capitalize() for a in ATTRIBUTES)], rows, "l" + "r" * len(ATTRIBUTES)), ""]


def _section_sif(evals: list[_Evaluation]) -> list[str]:
    """SR and SPL per situated-task group, when some evaluation ran situated (SIF) tasks."""
    tables = {ev.label: ev.metric("sif_table") for ev in evals}
    if not any(tables.values()):
        return []
    rows = []
    for ev in evals:
        table = tables[ev.label]
        for group in metrics.SIF_GROUPS:
            if group in table:
                row = table[group]
                rows.append([ev.label, group, int(row["runs"]), _num(row["SR"]), _num(row["SPL"])])
    return ["## Situated tasks (SIF): SR and SPL per kind", "",
            "SPL weighs each success by the oracle's path over the run's path, in metres (see docs/sif.md); PnP: "
            "nothing relevant moved, S_obj: the object was moved unseen, S_hum: the person walked away and is the "
            "destination.", "",
            *_table(["Model", "Kind", "Runs", "SR", "SPL"], rows, "llrrr"), ""]


SAFETY_KINDS = ("limit_clipped", "keep_out", "watchdog_stop", "estop", "cancel", "approval")


def _section_safety(evals: list[_Evaluation]) -> list[str]:
    rows = []
    for ev in evals:
        totals = {k: sum(r.safety_events.get(k, 0) for r in ev.results) for k in SAFETY_KINDS}
        runs_with = sum(1 for r in ev.results if any(r.safety_events.values()))
        rows.append([ev.label, *(totals[k] for k in SAFETY_KINDS), f"{runs_with}/{len(ev.results)}"])
    return ["## 5. Safety events", "",
            "What the safety layer did over all runs (see docs/safety.md): limits clipped, subtasks refused by keep-out "
            "rules (S1), watchdog stops, e-stops, cancels and approval decisions; and how many runs had any.", "",
            *_table(["Model", "Limits clipped", "Keep-out refusals", "Watchdog stops", "E-stops", "Cancels", "Approvals",
                     "Runs with events"], rows, "l" + "r" * (len(SAFETY_KINDS) + 1)), ""]


def _markdown(evals: list[_Evaluation], links: dict[str, str] | None = None) -> str:
    links = links or {}
    lines = ["# HomieBot evaluation report", ""]
    lines += _section_evaluations(evals)
    lines += _section_main(evals, links)
    lines += _section_errors(evals, links)
    lines += _section_actions(evals)
    lines += _section_attributes(evals)
    lines += _section_sif(evals)
    lines += _section_safety(evals)
    return "\n".join(lines).rstrip("\n") + "\n"


def render_markdown(folders: Sequence[Path | str]) -> str:
    """The Markdown report (without chart links) for one or more evaluation folders."""
    return _markdown(_load_all(folders))


# ----------------------------------------------------------------------------------------- charts


def _code_colours(codes: Sequence[str]) -> dict[str, Any]:
    """Codes of one category share a hue (shades of one tab20c group); codes outside the taxonomy are grey."""
    from matplotlib import colormaps

    cmap = colormaps["tab20c"]
    base = {"Format": 0, "Logical": 4, "Distance": 8, "Execution": 12}
    colours = {code: cmap(base[cat] + i) for cat, group in ERROR_GROUPS for i, code in enumerate(group)}
    extra = [c for c in codes if c not in colours]
    colours.update({code: cmap(16 + i % 4) for i, code in enumerate(extra)})
    return colours


def _save(fig: Any, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    return path


def _chart_errors(ev: _Evaluation, path: Path) -> Path:
    import numpy as np
    from matplotlib.figure import Figure

    nums = _error_numbers(ev)
    groups = _error_groups(ev)
    codes = [code for _, group in groups for code in group]
    fig = Figure(figsize=ERROR_FIGSIZE, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(codes))
    width = 0.38
    for offset, outcome, name, colour in ((-width / 2, "success", "successful runs", "tab:green"),
                                          (width / 2, "failed", "failed runs", "tab:red")):
        n = nums[outcome]
        values = [n["shares"][c] or 0.0 for c in codes]
        total = n["total"]
        label = f"{name} ({total} error{'' if total == 1 else 's'})" if total else f"{name} (no errors)"
        ax.bar(x + offset, values, width, label=label, color=colour)
    for k in range(1, len(groups)):  # separate the categories
        ax.axvline(sum(len(c) for _, c in groups[:k]) - 0.5, color="0.8", linewidth=0.8)
    ax.set_xticks(x, codes)
    ax.set_ylabel("share of errors (%)")
    ax.set_ylim(0, 115)  # room for the legend above a 100 % bar
    ax.set_yticks(range(0, 101, 20))
    ax.set_title(f"Error types – {ev.label}")
    ax.legend(loc="upper center", ncols=2)
    return _save(fig, path)


def _chart_overview(evals: list[_Evaluation], path: Path) -> Path:
    from matplotlib.figure import Figure

    numbers = [_error_numbers(ev) for ev in evals]
    codes = list(ERROR_CODES)
    for n in numbers:
        codes += [c for c in n["failed"]["counts"] if c not in codes]
    colours = _code_colours(codes)
    height = 1.8 + 0.45 * len(evals)
    fig = Figure(figsize=(10.0, height), dpi=DPI, layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    labels = [ev.label for ev in evals]
    y = list(range(len(evals)))
    for ax, outcome, title in zip(axes, ("success", "failed"), ("Successful runs", "Failed runs")):
        left = [0.0] * len(evals)
        for code in codes:
            widths = [n[outcome]["shares"].get(code) or 0.0 for n in numbers]
            ax.barh(y, widths, left=left, color=colours[code], label=code, edgecolor="white", linewidth=0.5)
            left = [a + b for a, b in zip(left, widths)]
        for yi, n in zip(y, numbers):
            if not n[outcome]["total"]:
                ax.text(2, yi, "no errors", va="center", fontsize=8, color="0.4")
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of errors (%)")
        ax.set_title(title)
    axes[0].set_yticks(y, labels)
    axes[0].invert_yaxis()
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=min(len(codes), 10), fontsize=8)
    return _save(fig, path)


def _chart_metrics(evals: list[_Evaluation], path: Path) -> Path:
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=METRICS_FIGSIZE, dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(CHART_METRICS))
    width = 0.8 / len(evals)
    for i, ev in enumerate(evals):
        s = ev.metric("summary")
        values = [0.0 if _missing(s.get(k)) else float(s[k]) for k in CHART_METRICS]
        bars = ax.bar(x - 0.4 + width * (i + 0.5), values, width, label=ev.label, color=f"C{i % 10}")
        if len(evals) <= 6:
            ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    ax.set_xticks(x, CHART_METRICS)
    ax.set_ylabel("percent")
    ax.set_ylim(0, 105)
    ax.set_title("Overall performance")
    ax.legend(loc="upper left", fontsize=8)
    return _save(fig, path)


def _charts(evals: list[_Evaluation], out_dir: Path) -> dict[str, Path]:
    try:
        import matplotlib.style
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ReportError("charts need matplotlib: pip install matplotlib") from exc
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    charts: dict[str, Path] = {}
    with matplotlib.style.context("default"):  # independent of the user's matplotlibrc
        charts["metrics"] = _chart_metrics(evals, out_dir / "metrics.png")
        charts["errors_overview"] = _chart_overview(evals, out_dir / "error_overview.png")
        for ev in evals:
            charts[f"errors:{ev.slug}"] = _chart_errors(ev, out_dir / f"errors_{ev.slug}.png")
    return charts


def render_charts(folders: Sequence[Path | str], out_dir: Path | str) -> list[Path]:
    """Write PNG charts into out_dir and return their paths.

    ``metrics.png`` compares SR, PLWSR and TP across the folders; ``error_overview.png`` stacks the
    error-type shares of every folder, successful runs left and failed runs right; ``errors_<label>.png``
    shows one folder's shares per code, successful next to failed runs.
    """
    return list(_charts(_load_all(folders), Path(out_dir)).values())


# ----------------------------------------------------------------------------------------- output


def write_report(folders: Sequence[Path | str], out: Path | str | None = None) -> Path:
    """Write ``report.md`` and its charts into out (default: ``<first folder>/report``); return the Markdown path."""
    evals = _load_all(folders)
    out_dir = Path(out) if out is not None else Path(folders[0]) / "report"
    charts = _charts(evals, out_dir)
    links = {key: Path(os.path.relpath(path, out_dir)).as_posix() for key, path in charts.items()}
    md_path = out_dir / "report.md"
    md_path.write_text(_markdown(evals, links), encoding="utf-8")
    return md_path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m homiebot.bench.report",
                                     description="Markdown report and charts for `homiebot eval --out` folders.")
    parser.add_argument("folders", nargs="+", type=Path, help="evaluation folders (each with results.jsonl)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: <first folder>/report)")
    args = parser.parse_args(argv)
    try:
        path = write_report(args.folders, args.out)
    except ReportError as exc:
        parser.exit(2, f"error: {exc}\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One self-contained HTML report of a judged call, from its result document.

``livejudge report RESULT.json -o report.html`` and ``--report report.html`` on ``score``,
``replay``, ``attach`` and ``demo`` (and ``report_path=`` on the Pipecat observer) write it.
The file needs no network when viewed: the plots are matplotlib figures inlined as SVG
(matplotlib: PSF/BSD-style licence, the ``livejudge[report]`` extra), the style sheet is
inline, and there is no script. It prints on A4/Letter (``@media print``).

Contents, top to bottom: the summary (timing, P(human), judge identity and validity line),
a two-channel timeline of the call aligned with P(human) per judged window (SVG id
``lj-timeline``), the response latencies against the human reference bands with their
sources (``lj-latency``), the per-event verdicts (counts and flagged rates per kind, then every
judged moment; flagged ones are red crosses on the timeline), the 18 dimensions by category with evidence and gating
(``lj-dimensions`` plus a table), the top contributors per window (``lj-contributions`` plus a
table), the transcripts when present, and any errors recorded during the call.

All times are seconds on the session clock (see ``livejudge.outputs.report``).
"""

from __future__ import annotations

import html
import io
import math
import re
from pathlib import Path
from typing import Any, NamedTuple

from livejudge.outputs.report import dimension_means, dimension_view
from livejudge.timing.metrics import RESPONSE_LATENCY_HUMAN, S2S_LATENCY_RANGE, TYPICAL_GAP_S
from livejudge.timing.verdicts import JOINED_MOMENT_WORDS, joined_text, moment_groups

INSTALL_HINT = "the HTML report needs matplotlib: pip install 'livejudge[report]'"

PLOT_IDS = ("lj-timeline", "lj-latency", "lj-dimensions", "lj-contributions")
"""The ids of the inline SVG plots (tests and style sheets rely on them)."""

COLORS = {"user": "#1f77b4", "agent": "#ff7f0e", "overlap": "#d62728", "human": "#2ca02c",
          "machine": "#d62728", "gated": "#bbbbbb", "band_human": "#2ca02c", "band_s2s": "#9467bd"}


class ReportError(Exception):
    """The report cannot be made: matplotlib missing or the document is not a livejudge result."""


def require_matplotlib():
    """Import check with the install hint (ReportError). Figures are made with
    ``matplotlib.figure.Figure`` directly, not pyplot: no global backend switch and safe off
    the main thread (the Pipecat observer writes its report from a worker thread)."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError as exc:
        raise ReportError(INSTALL_HINT) from exc


def _figure(**kwargs):
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _esc(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _fmt(x: float | None, nd: int = 2, unit: str = "") -> str:
    return "–" if x is None else f"{x:.{nd}f}{unit}"


def _svg(fig, svg_id: str, title: str) -> str:
    """The figure as an inline <svg> element with ``id=svg_id`` and an accessible title."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": svg_id}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE (not allowed inline)
    # width/height in pt from matplotlib: keep the viewBox, let CSS size it
    text = re.sub(r'<svg([^>]*?)\swidth="[^"]*"\sheight="[^"]*"',
                  lambda m: f'<svg{m.group(1)}', text, count=1)
    text = text.replace("<svg", f'<svg id="{svg_id}" role="img" aria-label="{_esc(title)}"', 1)
    # matplotlib's own ids (clip paths, glyphs) get the plot id as a prefix: unique in the page
    text = re.sub(r'id="([^"]+)"', lambda m: m.group(0) if m.group(1) == svg_id else f'id="{svg_id}-{m.group(1)}"', text)
    text = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{svg_id}-{m.group(1)})", text)
    text = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{svg_id}-{m.group(1)}"', text)
    return text


# ---------------------------------------------------------------------------- helpers on the doc
def _dimension_table() -> list[tuple[str, str, str, str]]:
    """[(id, display name, category numeral, category name)] in the paper's order."""
    from livejudge.judge.model.dimensions import CATEGORY_NAMES, DIMENSIONS

    return [(d.id, d.name, d.category, CATEGORY_NAMES[d.category]) for d in DIMENSIONS]


def _windows(doc: dict) -> list[dict]:
    return [w for w in doc.get("judge") or [] if isinstance(w, dict)]


def _last_evidence_window(doc: dict) -> dict | None:
    ws = [w for w in _windows(doc) if w.get("p_human") is not None]
    return ws[-1] if ws else None


def validity_line(doc: dict) -> str | None:
    """The judge's validity statement, when the result carries one (``judge_info.validated``, as
    the judge writes it; also ``validity`` at the top or in ``judge_info``, or ``judge_validity``):
    a string, or a dict rendered as one line."""
    info = doc.get("judge_info") if isinstance(doc.get("judge_info"), dict) else {}
    v = (info.get("validated") or doc.get("validity") or info.get("validity")
         or doc.get("judge_validity"))
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        for key in ("line", "summary", "text", "message"):
            if isinstance(v.get(key), str):
                return v[key]
        return " · ".join(f"{k}: {val}" for k, val in v.items() if not isinstance(val, (dict, list)))
    return str(v)


def check_result(doc: Any) -> dict:
    """The document if it looks like a livejudge result, else ReportError naming what is missing."""
    if not isinstance(doc, dict):
        raise ReportError("not a livejudge result document (expected a JSON object)")
    missing = [k for k in ("duration_s", "segments", "summary") if k not in doc]
    if missing and "medians" in doc and "calls" in doc:  # "missing duration_s" said nothing of what it was (a trial)
        raise ReportError("a batch's summary.json, not one call's result: report one of the call results the "
                          "batch wrote beside it (OUT_DIR/CALL.json), or put batches side by side with "
                          "`livejudge compare BEFORE/ AFTER/`")
    if missing:
        raise ReportError(f"not a livejudge result document: missing {', '.join(missing)} "
                          "(write one with: livejudge score CALL.wav --json result.json)")
    from livejudge.outputs.report import DocumentError, check_result_document

    try:  # types and bounds: a hand-edited or hostile document is one line, never a crash or 72 TiB
        return check_result_document(doc, "result")
    except DocumentError as exc:
        raise ReportError(str(exc)) from None


class _Record(NamedTuple):
    """A result's verdict record as ``moment_groups`` reads it (a time or value that is not a
    number: None, so it joins nothing)."""

    kind: str
    t_s: float | None
    value_s: float | None


def _number_or_none(x: object) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def verdict_rows(vs: list[dict]) -> list[list[tuple[int, dict]]]:
    """The report's rows of per-event verdicts (result ``verdicts``), one per moment, in order:
    ``[[(index in vs, verdict), ...], ...]``. Moments are ``livejudge.timing.verdicts.moment_groups``'
    (a reply after dead air: one row, under the latency, its dead air second, so one gap is listed
    and flagged once; a new user saw a 2.5 s gap twice; likewise a start over the caller, latency
    and talk-over); every other verdict is a row of its own."""
    recs = [_Record(str(v.get("kind")), _number_or_none(v.get("t_s")), _number_or_none(v.get("value_s")))
            for v in vs]
    return [[(i, vs[i]) for i in g] for g in moment_groups(recs)]


def _flagged_moments(doc: dict) -> tuple[int, int] | None:
    """(flagged, all) moments of the result's verdicts as the report lists them (``verdict_rows``);
    None when the result has no verdicts list."""
    vs = doc.get("verdicts")
    if not isinstance(vs, list):
        return None
    rows = verdict_rows([v for v in vs if isinstance(v, dict)])
    return sum(1 for r in rows if any(not v.get("ok") for _, v in r)), len(rows)


# ---------------------------------------------------------------------------- plots
def plot_timeline(doc: dict) -> str:
    """Two lanes (user, agent) of speech segments with their turns outlined, overlaps shaded,
    barge-ins (arrow from the barge-in onset to where the other side fell silent: the yield
    time) and backchannels; below, on the same time axis, P(human) per judged window with the
    0.5 line. SVG id ``lj-timeline``."""
    dur = max(float(doc.get("duration_s") or 0.0), 1.0)
    fig = _figure(figsize=(11, 4.2))
    ax, axp = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [1.5, 1.0], "hspace": 0.08})
    lanes = {"user": 1.0, "agent": 0.0}
    for o in doc.get("overlaps") or []:
        ax.axvspan(o["onset_s"], o["offset_s"], color=COLORS["overlap"], alpha=0.18, lw=0)
        axp.axvspan(o["onset_s"], o["offset_s"], color=COLORS["overlap"], alpha=0.10, lw=0)
    for ch, y in lanes.items():
        segs = [(s["onset_s"], s["offset_s"] - s["onset_s"]) for s in doc.get("segments") or []
                if s.get("channel") == ch and s.get("offset_s") is not None]
        ax.broken_barh(segs, (y - 0.28, 0.56), facecolors=COLORS[ch], alpha=0.85, lw=0)
        turns = [(t["onset_s"], t["offset_s"] - t["onset_s"]) for t in doc.get("turns") or []
                 if t.get("channel") == ch and t.get("offset_s") is not None]
        ax.broken_barh(turns, (y - 0.36, 0.72), facecolors="none", edgecolors="#333333", lw=0.8)
    for b in doc.get("backchannels") or []:
        y = lanes.get(b.get("channel"), 0.0)
        ax.plot([b["onset_s"]], [y + 0.44], marker="v", color="#555555", ms=6, ls="none")
    for b in doc.get("barge_ins") or []:
        y = lanes.get(b.get("by"), 0.0)
        t0 = b["onset_s"]
        ax.plot([t0], [y], marker="*", color="black", ms=11, ls="none", zorder=5)
        other_y = lanes["agent" if b.get("by") == "user" else "user"]
        if b.get("yield_s") is not None:
            ax.annotate("", xy=(t0 + b["yield_s"], other_y), xytext=(t0, other_y),
                        arrowprops={"arrowstyle": "->", "color": "black", "lw": 1.2})
            ax.text(t0 + b["yield_s"], other_y - 0.48, f"yield {b['yield_s']:.2f} s", fontsize=7, ha="center")
        else:
            ax.text(t0, other_y - 0.48, "kept talking", fontsize=7, ha="center", color=COLORS["machine"])
    # per-event verdicts that flag the agent: a red cross above the lanes, one per moment as the
    # verdict table lists them (a reply's dead air and its latency: one cross, at the reply)
    flagged = [r[0][1]["t_s"] for r in verdict_rows([v for v in doc.get("verdicts") or [] if isinstance(v, dict)])
               if any(not v.get("ok") for _, v in r) and r[0][1].get("t_s") is not None]
    if flagged:
        ax.plot(flagged, [1.45] * len(flagged), marker="X", color=COLORS["machine"],
                ms=7, ls="none", zorder=6)
    ax.set_yticks([1.0, 0.0], ["user", "agent"])
    ax.set_ylim(-0.75, 1.6)
    ax.set_xlim(0, dur)
    ax.grid(axis="x", alpha=0.3)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=COLORS["user"], label="user speech"),
                       Patch(color=COLORS["agent"], label="agent speech"),
                       Patch(facecolor="none", edgecolor="#333333", label="turn"),
                       Patch(color=COLORS["overlap"], alpha=0.3, label="overlap"),
                       Line2D([], [], marker="*", color="black", ls="none", label="barge-in (→ yield)"),
                       Line2D([], [], marker="v", color="#555555", ls="none", label="backchannel"),
                       Line2D([], [], marker="X", color=COLORS["machine"], ls="none", label="flagged verdict")],
              loc="upper center", bbox_to_anchor=(0.5, 1.28), ncol=7, fontsize=8, frameon=False)

    ws = _windows(doc)
    t = [w["t_s"] for w in ws]
    p = [math.nan if w.get("p_human") is None else w["p_human"] for w in ws]
    axp.axhline(0.5, color="#555555", ls="--", lw=1)
    axp.text(0.005, 0.52, "0.5: human-like above, machine-like below", transform=axp.get_yaxis_transform(),
             fontsize=7, color="#555555", va="bottom")
    if t:
        axp.plot(t, p, color="black", lw=1.2, marker="o", ms=3)
        for ti, pi in zip(t, p):
            if not math.isnan(pi):
                axp.plot([ti], [pi], marker="o", ms=4, ls="none",
                         color=COLORS["human"] if pi >= 0.5 else COLORS["machine"])
    else:
        axp.text(0.5, 0.5, "judge off: no P(human)", transform=axp.transAxes, ha="center", color="#777777")
    axp.set_ylim(0, 1)
    axp.set_ylabel("P(human)")
    axp.set_xlabel("session time (s)")
    axp.grid(alpha=0.3)
    return _svg(fig, "lj-timeline", "timeline of the call and P(human) over time")


def plot_latency(doc: dict) -> str:
    """Each response latency (user→agent gap, s) as a point and a histogram, against the human
    band (Stivers et al. 2009; SPEARBench human row) and the S2S range (SPEARBench).
    SVG id ``lj-latency``."""
    lat = [t["gap_s"] for t in doc.get("transitions") or [] if t.get("from") == "user" and t.get("to") == "agent"]
    fig = _figure(figsize=(11, 2.8))
    axh, axs = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2.0, 1.0], "hspace": 0.05})
    hi = max([S2S_LATENCY_RANGE.high_s + 0.3, *[x + 0.2 for x in lat]])
    lo = min([-0.5, *[x - 0.2 for x in lat]])
    for a in (axh, axs):
        a.axvspan(RESPONSE_LATENCY_HUMAN.low_s, RESPONSE_LATENCY_HUMAN.high_s, color=COLORS["band_human"], alpha=0.15, lw=0)
        a.axvspan(S2S_LATENCY_RANGE.low_s, S2S_LATENCY_RANGE.high_s, color=COLORS["band_s2s"], alpha=0.12, lw=0)
        a.axvline(TYPICAL_GAP_S, color=COLORS["band_human"], lw=1, ls=":")
        a.axvline(0, color="#555555", lw=0.8)
    if lat:
        import numpy as np

        # 100 ms bins, at most 400 of them (a far outlier widens the bins instead of multiplying them)
        bins = np.arange(lo, hi + 0.1, 0.1) if hi - lo <= 40.0 else np.linspace(lo, hi, 401)
        axh.hist(lat, bins=bins, color=COLORS["agent"], alpha=0.9)
        axh.yaxis.get_major_locator().set_params(integer=True)
        axs.plot(lat, [0] * len(lat), "|", color="black", ms=18, mew=2)
    else:
        axh.text(0.5, 0.5, "no response latency measured (no user→agent transition)",
                 transform=axh.transAxes, ha="center", color="#777777")
    axh.text(RESPONSE_LATENCY_HUMAN.high_s / 2, 0.95, "human", transform=axh.get_xaxis_transform(),
             ha="center", va="top", fontsize=8, color=COLORS["band_human"])
    axh.text((S2S_LATENCY_RANGE.low_s + S2S_LATENCY_RANGE.high_s) / 2, 0.95, "S2S systems",
             transform=axh.get_xaxis_transform(), ha="center", va="top", fontsize=8, color=COLORS["band_s2s"])
    axh.set_ylabel("count")
    axs.set_yticks([])
    axs.set_xlim(lo, hi)
    axs.set_xlabel("response latency: agent onset − user offset (s); negative = the agent started early (overlap)")
    return _svg(fig, "lj-latency", "response latencies against human reference bands")


def plot_dimensions(doc: dict, window: dict | None) -> str:
    """The 18 dimension scores (1 machine-like … 5 human-like) of one window, grouped by
    category; gated dimensions (too little evidence) grey at 3, and a dimension the head does not
    measure (``dimension_view``'s ``not_measured``) labelled as the table beside it labels it. SVG id ``lj-dimensions``."""
    rows = _dimension_table()
    fig = _figure(figsize=(11, 5.0))
    ax = fig.subplots()
    dims = (window or {}).get("dimensions") or {}
    not_measured = (dimension_view(doc) or {}).get("not_measured", {})
    ys = list(range(len(rows)))[::-1]
    last_cat = None
    for y, (did, name, cat, cat_name) in zip(ys, rows):
        d = dims.get(did)
        if did in not_measured or d is None or d.get("gated"):
            ax.barh(y, 0.08, left=2.96, color=COLORS["gated"])
            label = (f"not measured: {not_measured[did]}" if did in not_measured
                     else "gated: too little evidence" if d is not None else "not judged")
            ax.text(3.1, y, label, va="center", fontsize=7, color="#777777")
        else:
            s = float(d["score"])
            ax.barh(y, s - 3.0, left=3.0, color=COLORS["human"] if s >= 3 else COLORS["machine"], alpha=0.85)
            ax.text(s + (0.05 if s >= 3 else -0.05), y, f"{s:.1f}", va="center",
                    ha="left" if s >= 3 else "right", fontsize=7)
        if cat != last_cat:
            ax.axhline(y + 0.5, color="#999999", lw=0.6)
            ax.text(5.45, y, f"{cat}", va="center", fontsize=8, color="#555555")
            last_cat = cat
    ax.set_yticks(ys, [r[1] for r in rows], fontsize=8)
    ax.set_xlim(1, 5.6)
    ax.set_xticks([1, 2, 3, 4, 5], ["1 machine-like", "2", "3 no lean", "4", "5 human-like"], fontsize=8)
    ax.axvline(3, color="#555555", lw=0.8)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.grid(axis="x", alpha=0.3)
    title = "no judged window with evidence" if window is None else f"window ending at {window['t_s']:.1f} s"
    ax.set_title(f"dimension scores ({title})", fontsize=9)
    return _svg(fig, "lj-dimensions", "the 18 dimension scores by category")


def plot_contributions(doc: dict) -> str:
    """Heat map of each dimension's contribution to the machine-vs-human decision per judged
    window (positive = towards machine, the Turing-test paper, App. E: standardised z times the classifier
    weight); a dimension the head does not measure is labelled "(not measured)" in grey (its row
    reads 0). SVG id ``lj-contributions``."""
    import numpy as np

    rows = _dimension_table()
    ws = [w for w in _windows(doc) if w.get("p_human") is not None]
    fig = _figure(figsize=(11, 4.6))
    ax = fig.subplots()
    if ws:
        m = np.array([[float((w.get("dimensions") or {}).get(did, {}).get("contribution") or 0.0)
                       for w in ws] for did, *_ in rows])
        lim = max(float(np.abs(m).max()), 1e-6)
        t = [w["t_s"] for w in ws]
        edges = [t[0] - (t[1] - t[0] if len(t) > 1 else 1.0) / 2] + \
                [(a + b) / 2 for a, b in zip(t, t[1:])] + [t[-1] + (t[-1] - t[-2] if len(t) > 1 else 1.0) / 2]
        mesh = ax.pcolormesh(edges, np.arange(len(rows) + 1), m[::-1], cmap="RdBu_r", vmin=-lim, vmax=lim)
        cb = fig.colorbar(mesh, ax=ax, pad=0.01)
        cb.set_label("contribution (+ → machine, − → human)", fontsize=8)
        ax.set_xlabel("end of judged window (s)")
    else:
        ax.text(0.5, 0.5, "no judged window with evidence", transform=ax.transAxes, ha="center", color="#777777")
    nm = (dimension_view(doc) or {}).get("not_measured", {})  # their rows read 0 because the head has no feature for them
    labels = [r[1] + (" (not measured)" if r[0] in nm else "") for r in rows]
    ax.set_yticks(np.arange(len(rows)) + 0.5, labels[::-1], fontsize=8)
    for tick, (did, *_) in zip(ax.get_yticklabels(), rows[::-1]):
        if did in nm:
            tick.set_color("#999999")
    return _svg(fig, "lj-contributions", "contribution of each dimension per judged window")


# ---------------------------------------------------------------------------- HTML
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 margin:0 auto;max-width:1100px;padding:1em 1.5em;color:#222;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0} td,th{padding:.2em .6em;border-bottom:1px solid #eee;
 text-align:left;vertical-align:top} th{background:#f6f6f6} td.num{text-align:right;font-variant-numeric:tabular-nums}
svg{max-width:100%;height:auto;display:block} .muted{color:#666;font-size:.85em} .gated{color:#999}
.human{color:#2ca02c} .machine{color:#d62728} .cards{display:flex;flex-wrap:wrap;gap:.6em}
.card{border:1px solid #ddd;border-radius:6px;padding:.4em .8em;min-width:9em}
.card b{display:block;font-size:1.3em} .legend{color:#555;font-size:.9em;margin-top:-.4em} .validity{background:#fff8e1;border:1px solid #f0d070;padding:.4em .8em;border-radius:6px}
.heuristic{font-size:.8em;background:#eee;border-radius:3px;padding:0 .3em}
.cut{border-left:4px solid #d62728;padding:.3em .6em;background:#fdf0f0}
@media print{body{max-width:none;padding:0;font-size:10pt} h2{break-after:avoid} svg,table,.card{break-inside:avoid}
 a{color:inherit;text-decoration:none}}
"""


def _card(label: str, value: str, note: str = "") -> str:
    return f'<div class="card">{_esc(label)}<b>{_esc(value)}</b><span class="muted">{_esc(note)}</span></div>'


def _summary_html(doc: dict) -> str:
    sm = doc.get("summary") or {}
    ref = sm.get("latency_human_reference") or {}
    ph = sm.get("mean_p_human")
    user_bi = sm.get("user_barge_in_count", sm.get("barge_in_count"))
    moments = _flagged_moments(doc)
    cards = [
        _card("duration", _fmt(doc.get("duration_s"), 1, " s")),
        _card("mean P(human)", _fmt(ph, 3) if ph is not None and _fmt(ph) == "0.50" else _fmt(ph),  # 0.4996 read
              # "0.50 machine-like (< 0.5)" (a trial): three digits where two would round onto the line
              "" if ph is None else ("human-like (≥ 0.5)" if ph >= 0.5 else "machine-like (< 0.5)")),
        _card("response latency p50", _fmt(sm.get("latency_p50_s"), 2, " s"), f"{sm.get('latency_count', 0)} responses"),
        _card("response latency p90", _fmt(sm.get("latency_p90_s"), 2, " s"),
              f"human band {ref.get('low_s', 0):.2f}–{ref.get('high_s', RESPONSE_LATENCY_HUMAN.high_s):.2f} s"),
        _card("barge-ins by the user", str(user_bi if user_bi is not None else "–"),
              f"agent yielded in {_fmt(sm.get('yield_mean_s'), 2, ' s')} on average; "
              f"kept talking {sm.get('yield_none_count', '–')}×"),  # no count in the summary: not 0 (a trial)
        _card("agent talked over the user", str(sm.get("agent_talk_over_count", "–")),
              # early starts are the verdicts' human-like talk_over outcome: counted apart (older
              # results have no such count and counted them in)
              "" if sm.get("agent_early_start_count") is None else
              f"+{sm['agent_early_start_count']} early start{'' if sm['agent_early_start_count'] == 1 else 's'} "
              f"(the user ended within {_fmt((doc.get('verdict_config') or {}).get('talk_over_grace_s'), 1, ' s')}: "
              "human-like)"),
        _card("overlap", "–" if sm.get("overlap_ratio") is None else f"{sm['overlap_ratio'] * 100:.1f} %",
              f"{_fmt(sm.get('overlap_s'), 1, ' s')} of speech time"),
        _card("backchannels", str(sm.get("backchannel_count", "–")),
              # the caller's and the agent's apart (older results have no per-channel counts)
              "" if sm.get("agent_backchannel_count") is None else
              f"user {sm.get('user_backchannel_count', '–')} · agent {sm['agent_backchannel_count']}"),
        # "4 of 8" then "per-event verdicts ... (11 verdicts)" read as 8 verdicts and 11 (a trial): the
        # 8 are moments, said so, with the verdicts they hold, as the meter words it
        _card("flagged moments", f"{sm.get('verdict_flagged_count', '–')} of {sm.get('verdict_count', '–')}"
              if moments is None else f"{moments[0]} of {moments[1]}",
              "per-event verdicts: see Verdicts" if moments is None or moments[1] == sm.get("verdict_count") else
              f"moments; {sm.get('verdict_flagged_count', '–')} of their {sm.get('verdict_count', '–')} verdicts "
              f"flagged ({JOINED_MOMENT_WORDS}): see Verdicts"),
        _card("agent share of talk", "–" if sm.get("talk_ratio") is None else f"{sm['talk_ratio'] * 100:.0f} %"),
        _card("judged windows", str(sm.get("judged_windows", "–")),
              f"{sm.get('no_evidence_windows', 0)} without evidence, {sm.get('dropped_windows', 0)} dropped"
              + (f", {sm['judge_unavailable_windows']} not judged (judge service unavailable)"
                 if sm.get("judge_unavailable_windows") else "")),
    ]
    return '<div class="cards">' + "".join(cards) + "</div>"


def _verdicts_html(doc: dict) -> str:
    """Counts and flagged rates per verdict kind, then one row per judged moment."""
    from livejudge.timing.verdicts import OK_OUTCOMES, OUTCOMES

    vs = doc.get("verdicts")
    if vs is None:
        return '<p class="muted">No verdicts in this result (written by a livejudge before verdicts).</p>'
    sm = doc.get("summary") or {}
    rows = ["<table><tr><th>kind</th><th>outcomes (human-like first)</th><th>flagged rate</th></tr>"]
    for kind, outs in OUTCOMES.items():
        cells = ", ".join(
            f'<span class="{"human" if o in OK_OUTCOMES[kind] else "machine"}">{_esc(o.replace("_", " "))}</span> '
            f'{_esc(sm.get(f"verdict_{kind}_{o}_count", sum(1 for v in vs if v.get("kind") == kind and v.get("outcome") == o)))}'
            for o in outs)
        rate = sm.get(f"verdict_{kind}_flagged_rate")
        rows.append(f"<tr><td>{_esc(kind.replace('_', ' '))}</td><td>{cells}</td>"
                    f'<td class="num">{"–" if rate is None else f"{rate * 100:.0f} %"}</td></tr>')
    rows.append("</table>")
    rows.append("<table><tr><th>#</th><th>time (s)</th><th>verdict</th><th>measured (s)</th><th>threshold (s): when it flags</th>"
                "<th>basis</th></tr>")
    for row in verdict_rows(vs):  # numbers: what `livejudge check --pin-from RESULT --event N` takes
        v = row[0][1]
        cls = "human" if all(x.get("ok") for _, x in row) else "machine"
        text = str(v.get("text") or f"{v.get('kind')} {v.get('outcome')}").strip()
        text = text.split(" ", 1)[1] if text[:1].isdigit() or text[:1] == "-" else text
        basis = str(v.get("basis") or "")
        basis_html = '<span class="heuristic">HEURISTIC</span>' if basis.startswith("HEURISTIC") else _esc(basis)
        threshold = _threshold_cell(v)
        for _, d in row[1:]:  # the dead air of the same silence, or the talk-over of the same start (verdict_rows)
            kind = str(d.get("kind"))
            text += joined_text(kind, str(d.get("outcome")), _number_or_none(d.get("value_s")),
                                _number_or_none(d.get("threshold_s")), bool(d.get("ok")))
            name = kind.replace("_", " ").replace("talk over", "talk-over")
            threshold += f"; {name} {_threshold_cell(d)}"
            if str(d.get("basis") or "").startswith("HEURISTIC") and "HEURISTIC" not in basis_html:
                basis_html += f'; {_esc(name)} <span class="heuristic">HEURISTIC</span>'
        num = ", ".join(str(i) for i in sorted(i for i, _ in row))
        rows.append(f'<tr><td class="num">{num}</td><td class="num">{_fmt(v.get("t_s"), 2)}</td><td class="{cls}">{_esc(text)}</td>'
                    f'<td class="num">{_fmt(v.get("value_s"), 2)}</td><td class="num">{threshold}</td>'
                    f"<td>{basis_html}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _threshold_cell(v: dict) -> str:
    """A verdict's threshold with the side that is flagged ("flag above 1.00 (yield max)";
    ``verdicts.threshold_text``), escaped; "–" when none is shown."""
    from livejudge.timing.verdicts import threshold_text

    th = v.get("threshold_s")
    return _esc(threshold_text(str(v.get("kind")), str(v.get("outcome")),
                               float(th) if isinstance(th, (int, float)) else None))


_THRESHOLD_FLAGS = {"backchannel_yield_window_s": "--backchannel-yield-s"}
"""Verdict settings whose flag is not the key's own name (``commands/verdict_args.py``)."""


def _thresholds_text(cfg: Any) -> str:
    """The verdict thresholds as the flags that set them: "--yield-max-s 1 s, --pause-min-s 0.5 s"
    (a Python dict in the report read as a leak; a trial). Pure."""
    if not isinstance(cfg, dict) or not cfg:
        return "not recorded"
    out = []
    for k, v in cfg.items():
        flag = _THRESHOLD_FLAGS.get(k, "--" + k.replace("_", "-"))
        if k == "backchannel_max_s":  # a definition (Full-Duplex-Bench), not a flag
            flag = "backchannel max"
        out.append(f"{flag} {v:g} s" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{flag} {v}")
    return ", ".join(out)


def _health_html(doc: dict) -> str:
    """Input-health warnings (swapped, silent or identical channels, clipping...), if any, and what
    the echo gate did to the user channel when it was applied (a trial: 16.9 s of the caller's
    channel gated, and the report said nothing)."""
    src = doc.get("source") or {}
    ws = src.get("input_health") or []
    out = "".join(f'<p class="validity"><b>Input health:</b> {_esc(w.get("message", w))} '
                  '<span class="heuristic">HEURISTIC</span></p>' for w in ws if isinstance(w, dict))
    from livejudge.timing.echo import echo_gate_text

    text = echo_gate_text(src.get("echo_gate"))
    if text:
        out += f'<p><b>Echo gate:</b> {_esc(text)} <span class="heuristic">HEURISTIC</span></p>'
    line = src.get("line")
    if isinstance(line, dict) and line.get("note"):  # a telephone band (health.check_line)
        out += f'<p><b>Line:</b> {_esc(line["note"])} <span class="heuristic">HEURISTIC</span></p>'
    return out


def _judge_html(doc: dict) -> str:
    info = doc.get("judge_info")
    parts = []
    if isinstance(info, dict):
        ident = info.get("summary") or " · ".join(f"{k} {v}" for k, v in info.items() if isinstance(v, (str, int, float)))
        parts.append(f"<p><b>Judge:</b> {_esc(ident)}</p>")
        if str(info.get("provenance", "")).lower() == "prior":
            parts.append('<p class="validity">PRIOR head: set from published human figures, not trained on '
                         "rated calls. Read P(human) as a rough lean only.</p>")
    elif (doc.get("summary") or {}).get("mean_p_human") is not None or any(
            isinstance(w, dict) and w.get("p_human") is not None for w in doc.get("judge") or []):
        # P(human) without the judge that gave it: "off" beside a P(human) read as a contradiction (a trial)
        parts.append("<p><b>Judge:</b> not named in this result (its <code>judge_info</code> is missing): "
                     "the P(human) below cannot be traced to a head or a validity line</p>")
    else:
        parts.append("<p><b>Judge:</b> off (timing only)</p>")
    v = validity_line(doc)
    if v:
        v = v[len("validity: "):] if v.startswith("validity: ") else v  # the bold label says it
        parts.append(f'<p class="validity"><b>Validity:</b> {_esc(v)}</p>')
        legend = [text for key, text in VALIDITY_TERMS if key.lower() in v.lower()]  # "Sealed split" too
        if legend:  # the line's shorthand, said once where there is room (docs/judge.md, "Reading the validity line")
            parts.append(f'<p class="legend">{_esc("; ".join(legend))}.</p>')
    return "".join(parts)


VALIDITY_TERMS = (
    ("P(h)", "P(h): mean P(human) over a set's dialogues, each the mean over its judged windows"),
    ("acc ", "acc: the share of a set's dialogues classed right at P(human) 0.5"),
    ("sealed split", "sealed split: families and people no training fold and no design choice saw"),
    ("in its training", "(in its training): the head was fitted on it, so that figure is not held out"),
    ("final run", "final run N: the Nth sealed evaluation, logged in benchmarks/results/final_runs.jsonl"),
    ("ROC-AUC", "ROC-AUC: the chance that a random person scores above a random machine (0.5 = no better "
                "than chance)"),
    ("in the wild", "in the wild: neural voices gathered from public repositories, never fitted on "
                    "(docs/judge.md, \"Reading the validity line\")"),
    ("called human", "X of machine dialogues called human (P≥0.5): the share of the wild machine dialogues "
                     "whose P(human) is 0.5 or more, the figure to read first (a high AUC ranks people above "
                     "machines on average; it does not make one call's P(human) trustworthy)"),
    ("english speech only", "Fitted on English speech only: every row it was fitted on and every sealed and "
                            "leave-one-family-out figure is English speech; on a call in another language no "
                            "figure says how far P(human) holds"),
)
"""Shorthand of the validity line, explained under it in the report (the meter has no room; the
full text is docs/judge.md, "Reading the validity line"): (text that triggers the entry, entry)."""


HEURISTIC_DETECTOR_DIMENSIONS = {
    "use_of_fillers": "filled-pause-like stretches per minute",
    "auxiliary_vocalizations": "laughter-like bouts per minute",
}
"""The dimensions whose evidence is a count of a HEURISTIC detector
(``livejudge/judge/features/acoustic.py``: after Shriberg 2001; Bachorowski, Smoski & Owren 2001),
labelled so in the report's table: where none is detected the score sits at one value (a trial
read the same 3.2 in every window, unlabelled)."""


def _dimensions_html(window: dict | None, view: dict | None = None,
                     means: dict[str, float | None] | None = None) -> str:
    """The dimension table of one window. With the judge's ``dimension_view`` (result
    ``judge_info.dimensions``), a dimension the head does not measure says so and why instead of
    a score, and dimensions sharing one learned score are one row, its first member's ("(+N sharing
    its score)"), whose note names the others. ``means`` (``{"dim_<id>":
    mean over the call's ungated windows}``, ``livejudge.outputs.report.dimension_means``) adds a
    "call mean" column: the number ``livejudge compare`` and the gates read, beside the window's."""
    dims = (window or {}).get("dimensions") or {}
    means = means or {}
    t_s = (window or {}).get("t_s")
    when = "" if not isinstance(t_s, (int, float)) else f" (window ending at {float(t_s):.1f} s)"
    view = view if isinstance(view, dict) else {}
    not_measured = view.get("not_measured") or {}
    shared, merged = {}, set()
    for group in view.get("groups") or []:
        if len(group) > 1:
            for d in group:
                shared[d] = [x for x in group if x != d]
            merged.update(group[1:])  # one row per shared score, its first member's (README; a trial saw three)
    names_by_id = {did: name for did, name, *_ in _dimension_table()}
    out = [f"<table><tr><th>category</th><th>dimension</th><th>score (1–5){_esc(when)}</th>"
           "<th>call mean (ungated windows; what compare reads)</th><th>evidence</th>"
           "<th>gated</th><th>contribution</th><th>note</th></tr>"]
    last = None
    for did, name, cat, cat_name in _dimension_table():
        if did in merged and did not in not_measured:
            continue  # shown in its group's row
        d = dims.get(did)
        cat_cell = f"{cat} {cat_name}" if cat != last else ""
        last = cat
        if did in shared:
            name = f"{name} (+{len(shared[did])} sharing its score)"
        if did in not_measured:
            out.append(f'<tr class="gated"><td>{_esc(cat_cell)}</td><td>{_esc(name)}</td>'
                       f'<td colspan="6">not measured: {_esc(not_measured[did])}</td></tr>')
            continue
        mean = means.get(f"dim_{did}")
        mean_cell = f'<td class="num">{"–" if mean is None else _fmt(mean, 1)}</td>'
        if d is None:
            out.append(f'<tr class="gated"><td>{_esc(cat_cell)}</td><td>{_esc(name)}</td>'
                       f'<td>not judged</td>{mean_cell}<td colspan="4"></td></tr>')
            continue
        unit = {"s": "s of speech", "words": "words", "turns": "turns"}.get(d.get("evidence_unit") or "", d.get("evidence_unit") or "")
        ev = "none" if not d.get("evidence") else f"{d['evidence']:.0f} {unit}".strip()
        gated = bool(d.get("gated"))
        c = float(d.get("contribution") or 0.0)
        cls = ' class="gated"' if gated else ""
        note = d.get("reason", "") or ""
        if did in HEURISTIC_DETECTOR_DIMENSIONS:
            note = (f"HEURISTIC detector: {HEURISTIC_DETECTOR_DIMENSIONS[did]} (none detected keeps the score at one "
                    "value)" + (f"; {note}" if note else ""))
        if did in shared:
            note = ("one shared score with " + ", ".join(names_by_id.get(x, x) for x in shared[did])
                    + " (one learned direction: one piece of evidence, so one row; the result JSON gives each its "
                    "own 1–5 score, differing only by scale and cut-points)" + (f"; {note}" if note else ""))
        # a direction only where the shown value (two decimals) has one: "+0.00 → machine" read as a pull
        side = "" if gated or round(c, 2) == 0 else (' <span class="machine">→ machine</span>' if c > 0
                                                     else ' <span class="human">→ human</span>')
        shown = f"{c:+.2f}" if round(c, 2) != 0 else "0.00"
        out.append(f"<tr{cls}><td>{_esc(cat_cell)}</td><td>{_esc(name)}</td>"
                   f'<td class="num">{"3 (no lean)" if gated else _fmt(d.get("score"), 1)}</td>{mean_cell}'
                   f"<td>{_esc(ev)}</td><td>{'yes: too little evidence' if gated else 'no'}</td>"
                   f'<td class="num">{"–" if gated else shown}{side}</td>'
                   f"<td class=\"muted\">{_esc(note)}</td></tr>")
    out.append("</table>")
    return "".join(out)


def frames_words(fr: dict) -> str:
    """The frames a head's frame readout reads, from the result's ``judge_info.frame_readout``: each
    distinct encoder and block of ``member_frames`` (``frame_cnn.frames_in_words``: "tiny.en's
    block-2 and Whisper base's block-3 frames"), or, in results written before members named
    theirs, the encoder's ``encoder_blocks``."""
    from livejudge.judge.model.frame_cnn import frames_in_words

    members = fr.get("member_frames")
    if isinstance(members, list) and members and all(isinstance(m, dict) for m in members):
        return frames_in_words(list(dict.fromkeys((str(m.get("encoder")), m.get("encoder_blocks")) for m in members)))
    return frames_in_words([("shared", fr.get("encoder_blocks"))])


def _frame_note(doc: dict) -> str:
    """With a head's frame readout: P(human) is not the dimensions' alone; say so where they are shown."""
    info = doc.get("judge_info")
    fr = info.get("frame_readout") if isinstance(info, dict) else None
    if not isinstance(fr, dict):
        return ""
    w = float(fr.get("weight", 0.5))
    return ('<p class="validity"><b>P(human) is a blend:</b> '
            f"{1 - w:g} × the log-odds of the linear head over the dimensions above + {w:g} × the log-odds of the "
            f"<b>frame CNN</b>, small temporal networks ({_esc(fr.get('members', 1))}, their P averaged) over "
            f"{_esc(frames_words(fr))} of the agent's turns. The frame CNN is not one of the 18 dimensions and has no 1–5 score; its "
            "pull is listed with theirs under \"Top contributors per window\" (the chart above that table shows "
            "the dimensions only). The dimensions' contributions shown here are already scaled by "
            f"{1 - w:g}. How the head was made: docs/judge.md, \"A frame readout beside the linear head\".</p>")


def no_evidence_reason(window: dict) -> str:
    """Why a judged window (result ``judge[i]``) has no P(human): every dimension gated, or the
    ungated ones carrying less than ``livejudge.events.MIN_EVIDENCE_SHARE`` of the classifier's
    weight (HEURISTIC threshold). A window said "every dimension gated" while three were not (a new
    user's trial)."""
    from livejudge.events import MIN_EVIDENCE_SHARE

    dims = window.get("dimensions") or {}
    if not dims or all(d.get("gated") for d in dims.values() if isinstance(d, dict)):
        return "no evidence (every dimension gated)"
    share = window.get("evidence_share")
    if isinstance(share, (int, float)):
        return (f"no evidence: its ungated dimensions carry {share * 100:.0f}% of the classifier's weight, "
                f"under the {MIN_EVIDENCE_SHARE * 100:.0f}% needed (HEURISTIC)")
    return "no evidence: its ungated dimensions carry too little of the classifier's weight"


def _contributors_html(doc: dict, top: int = 3) -> str:
    """Top contributors per window; dimensions sharing one learned score (the judge's dimension
    view) are one item, "<first> (+N sharing its score)", with their contributions summed
    (``meter.merge_shared``)."""
    from types import SimpleNamespace

    from livejudge.outputs.meter import merge_shared

    names = {did: name for did, name, *_ in _dimension_table()}
    info = doc.get("judge_info")
    fr_info = info.get("frame_readout") if isinstance(info, dict) else None
    names["frame_readout"] = ("frame CNN" + (f" ({frames_words(fr_info)}; no dimension)"
                                             if isinstance(fr_info, dict) else ""))
    view = info.get("dimensions") if isinstance(info, dict) else None
    view = view if isinstance(view, dict) else None
    rows = ["<table><tr><th>window (s)</th><th>P(human)</th><th>top contributors "
            "(+ pushes towards machine, − towards human)</th></tr>"]
    run: list = []  # consecutive windows without evidence for one reason: one row (a trial's call
    # with 59 minutes of silence at its end listed 1773 such windows, one row each)

    def flush() -> None:
        if run:
            n = f" ({len(run)} windows)" if len(run) > 1 else ""
            rows.append(f'<tr class="gated"><td>{run[0].get("window_start_s", 0):.1f}–{run[-1]["t_s"]:.1f}{n}</td>'
                        f"<td>–</td><td>{_esc(no_evidence_reason(run[0]))}</td></tr>")
            run.clear()

    for w in _windows(doc):
        ph = w.get("p_human")
        if ph is None:
            if run and no_evidence_reason(run[0]) != no_evidence_reason(w):
                flush()
            run.append(w)
            continue
        flush()
        dims = merge_shared([(k, SimpleNamespace(contribution=float(v.get("contribution") or 0.0)))
                             for k, v in (w.get("dimensions") or {}).items() if not v.get("gated")], view)
        fr = w.get("frame_readout")
        if isinstance(fr, dict):  # a head's frame readout: part of P(human), no dimension (judge/model/frame_cnn.py)
            dims.append(("frame_readout", SimpleNamespace(contribution=float(fr.get("contribution") or 0.0))))
        dims.sort(key=lambda kv: -abs(kv[1].contribution))
        more = lambda v: getattr(v, "n_members", 1) - 1  # noqa: E731
        items = ", ".join(
            f'{_esc(names.get(k, k))}{f" (+{more(v)} sharing its score)" if more(v) > 0 else ""} '
            f'<span class="{"machine" if v.contribution > 0 else "human"}">{v.contribution:+.2f}</span>'
            for k, v in dims[:top])
        cls = "human" if ph >= 0.5 else "machine"
        rows.append(f'<tr><td>{w.get("window_start_s", 0):.1f}–{w["t_s"]:.1f}</td>'
                    f'<td class="num {cls}">{ph:.2f}</td><td>{items or "–"}</td></tr>')
    flush()
    rows.append("</table>")
    return "".join(rows)


def _transcripts_html(doc: dict) -> str:
    tr = doc.get("transcripts") or []
    if not tr:
        return ('<p class="muted">No transcripts (speech recognition was off or not installed: '
                "pip install 'livejudge[asr]' and score with --asr on).</p>")
    rows = ["<table><tr><th>time (s)</th><th>channel</th><th>text</th><th>words</th></tr>"]
    for t in tr:
        rows.append(f'<tr><td>{t["onset_s"]:.1f}–{t["offset_s"]:.1f}</td><td>{_esc(t.get("channel"))}</td>'
                    f'<td>{_esc(t.get("text"))}</td><td class="num">{_esc(t.get("n_words"))}</td></tr>')
    rows.append("</table>")
    return "".join(rows)


_EMBEDDED = {"pipecat": "Pipecat observer", "livekit": "LiveKit tap"}
"""An embedding's ``source.source``, as the report names it."""


def _route_text(src: dict) -> str:
    """How a live call was reached, for the report's header: " · ws://… (pipecat-eval, runner route
    eval, WebRTC adds 102 ms to each latency, no playback)" ('' for a recording). Two reports of one
    bot over two routes differed by the WebRTC delay with nothing saying so (a trial). Pure."""
    if src.get("kind") != "attach" or not src.get("url"):
        return ""
    bits = [str(src.get("protocol") or "")]
    runner = src.get("runner") or {}
    if runner.get("route"):
        bits.append(f"runner route {runner['route']}")
    rtc = src.get("webrtc") or {}
    if isinstance(rtc.get("added_delay_ms"), (int, float)):
        bits.append(f"WebRTC adds {rtc['added_delay_ms']:.0f} ms to each latency")
    if src.get("playback") is False:
        bits.append("no playback")
    bits = [b for b in bits if b]
    return f" · {src['url']}" + (f" ({', '.join(bits)})" if bits else "")


def render_html(doc: dict, *, title: str | None = None) -> str:
    """The report as one HTML string (UTF-8, no external resources, no script).

    Args:
        doc: a result document (``livejudge.outputs.report.build_result`` / ``--json`` output).
        title: page title (default: the source file or kind).
    Raises:
        ReportError: matplotlib is missing (install hint) or ``doc`` is not a result document.
    """
    doc = check_result(doc)
    require_matplotlib()  # fail early with the install hint
    src = doc.get("source") or {}
    # a demo report read "attach"; an embedding's read "call", its kind empty (trials)
    kind = "demo" if src.get("demo_agent") else src.get("kind") or _EMBEDDED.get(str(src.get("source")))
    files = [Path(str(src[k])).name for k in ("file", "agent_file") if src.get(k)]  # a call one side per file: both
    name = title or " + ".join(files) or kind or "call"
    ended = str(src.get("ended") or "")
    # a call cut short says so at the top (a trial: the JSON said "interrupted (Ctrl-C)", the page nothing)
    cut = (f'<p class="cut">This call was cut short ({_esc(ended)}) after {_fmt(doc.get("duration_s"), 1, " s")}: '
           "every figure below covers the audio up to then.</p>" if ended.startswith(("interrupted", "failed"))
           else f'<p class="cut">This recording is truncated: it ends before its header says (or could not be decoded '
                f'past {_fmt(doc.get("duration_s"), 1, " s")}), so every figure below covers only the part that could '
                "be read (Input health).</p>" if src.get("truncated") else "")
    window = _last_evidence_window(doc)
    # a judge-off call: 18 "not judged" rows and an empty contributors table said nothing (a trial)
    judged = bool(doc.get("judge")) or isinstance(doc.get("judge_info"), dict)
    sm = doc.get("summary") or {}
    ref = sm.get("latency_human_reference") or {}
    lat_note = (f"Human reference: {RESPONSE_LATENCY_HUMAN.low_s:.2f}–{RESPONSE_LATENCY_HUMAN.high_s:.3f} s "
                f"({_esc(ref.get('source') or RESPONSE_LATENCY_HUMAN.source)}); typical gap "
                f"{TYPICAL_GAP_S:.1f} s, dotted (Levinson &amp; Torreira 2015, Front. Psychol. 6:731). "
                f"S2S systems: {S2S_LATENCY_RANGE.low_s:.3f}–{S2S_LATENCY_RANGE.high_s:.3f} s "
                f"({_esc(S2S_LATENCY_RANGE.source)}).")
    errors = doc.get("errors") or []
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>livejudge report · {_esc(name)}</title><style>{CSS}</style></head><body>",
        f"<h1>livejudge report · {_esc(name)}</h1>",
        f'<p class="muted">livejudge {_esc(doc.get("livejudge_version"))} · created {_esc(doc.get("created_utc"))} '
        f'· {_esc(kind or "")}{_esc(_route_text(src))}{" · ended: " + _esc(ended) if ended else ""} · all times in '
        "seconds from the start of the call</p>",
        cut,
        _summary_html(doc),
        _health_html(doc),
        _judge_html(doc),
        "<h2>Timeline</h2>",
        plot_timeline(doc),
        '<p class="muted">Speech segments from the voice activity detector (offsets back-dated to the last '
        "voiced frame); a turn groups segments separated by pauses shorter than "
        f"{_esc((doc.get('config') or {}).get('merge_pause_s', '–'))} s. Backchannels: short utterances "
        f"(under {_esc((doc.get('config') or {}).get('backchannel_max_s', '–'))} s) that do not take the turn "
        '<span class="heuristic">HEURISTIC</span>.'
        + (" P(human) is drawn at the end of each judged window "
           f"({_esc((doc.get('config') or {}).get('window_s', '–'))} s long); gaps in the line are windows "
           "with no evidence." if judged else "") + "</p>",
        "<h2>Verdicts</h2>",
        _verdicts_html(doc),
        '<p class="muted">One row per judged moment: caller barge-ins (did the agent yield, how fast), caller '
        "backchannels (did the agent hold or falsely yield), caller pauses (did it wait or cut in), agent starts "
        "while the caller speaks, dead air, restarts after yielding, and each response latency against the "
        f"human bands ({JOINED_MOMENT_WORDS} and one row, numbered with each of its verdicts; the counts above are "
        "per verdict). Latency bands carry their sources; the other thresholds "
        f"({_esc(_thresholds_text(doc.get('verdict_config')))}) are "
        '<span class="heuristic">HEURISTIC</span> and set by flags.</p>',
        "<h2>Response latency</h2>",
        plot_latency(doc),
        f'<p class="muted">{lat_note}</p>',
        *([
            "<h2>Dimensions</h2>",
            plot_dimensions(doc, window),
            _dimensions_html(window, dimension_view(doc), dimension_means(doc)),
            '<p class="muted">Scores on the 1–5 scale of the Turing-test paper (“Human or Machine?”, App. D.2): '
            "1 strongly machine-like, 5 strongly human-like, 3 no lean. A gated dimension had too little evidence "
            "in the window and does not count towards P(human). A score and a contribution can point different "
            "ways: the score is read against the neutral rating 3 (the ODL cut-points), the contribution against "
            "the average of the calls the head was fitted on (standardised z times its classifier weight, as in "
            "the Turing-test paper, App. E.7), so a dimension scored a little above 3 but below that average "
            "pushes towards machine.</p>",
            _frame_note(doc),
            "<h2>Top contributors per window</h2>",
            plot_contributions(doc),
            _contributors_html(doc),
        ] if judged else [
            "<h2>Dimensions</h2>",
            '<p class="muted">Not measured: the judge was off or could not load (timing only), so this call has '
            "no P(human), dimension scores or contributors.</p>"]),
        "<h2>Transcripts</h2>",
        _transcripts_html(doc),
    ]
    if errors:
        parts.append("<h2>Errors during the call</h2><ul>" + "".join(f"<li>{_esc(e)}</li>" for e in errors) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_html(doc: dict, path: str | Path, *, title: str | None = None) -> Path:
    """Write ``render_html(doc)`` to ``path`` atomically (temp file + rename). Raises ReportError, OSError."""
    text = render_html(doc, title=title)
    from livejudge.outputs.guard import write_text_atomic

    return write_text_atomic(path, text)

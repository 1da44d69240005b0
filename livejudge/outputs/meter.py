"""The live terminal meter (rich), and its plain-text fallback for pipes and CI logs.

Both are session sinks that *read* the session on their own schedule (the meter refreshes
4× a second from its own thread), so drawing never holds up the audio path.

Layout (fits 80×24)::

    livejudge · replay call.wav  t=  23.4s  user ● agent ○  <head> <version>
    P(human) 0.31 ███████░░░░░│░░░░░░░░░░░░  machine-like  trend ▁▂▃▅▃▂
    top: intonation →machine 0.80  rhythm →human 0.37 …
    I   memory consist.   ··3··   3 no data  response latency last 0.78 s
    ...  (18 dimensions in 5 categories)      p50 / p90, human bands, barge-ins, turn log
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from livejudge.events import Backchannel, BargeIn, JudgeResult, Transition
from livejudge.timing.metrics import RESPONSE_LATENCY_HUMAN, S2S_LATENCY_RANGE, talk_over_counts
from livejudge.timing.verdicts import Verdict, moments, verdict_text

if TYPE_CHECKING:
    from livejudge.session import Session

SPARK = "▁▂▃▄▅▆▇█"

SHORT_NAMES = {
    "memory_consistency": "memory consist.",
    "logical_coherence": "logic coherence",
    "pronunciation_accuracy": "pronunc. accuracy",
    "code_switching": "code-switching",
    "linguistic_imprecision": "hedging/imprecis.",
    "use_of_fillers": "use of fillers",
    "metaphor_and_implied_meaning": "metaphor/implied",
    "rhythm": "rhythm",
    "intonation": "intonation",
    "stress": "stress",
    "auxiliary_vocalizations": "aux. vocalization",
    "micro_physiological_noise": "breathing/mouth",
    "pronunciation_instability": "pronunc. instab.",
    "accent": "accent",
    "sycophant_behavior": "sycophancy",
    "written_style_expression": "written style",
    "textual_sentiment": "text sentiment",
    "acoustic_emotion": "acoustic emotion",
    "frame_readout": "frame CNN",
}

FRAME_ITEM = "frame_readout"
"""The id under which a head's frame readout (``livejudge.judge.model.frame_cnn``) is listed beside
the dimensions where contributions are named: it is part of P(human), but no dimension."""


@dataclass(frozen=True)
class FrameContribution:
    """The frame readout's pull on the blended log-odds (``JudgeResult.frame_contribution``)."""

    contribution: float


def with_frame_item(items: list, result: JudgeResult) -> list:
    """``items`` plus the frame readout's pull when the window has one (``FRAME_ITEM``)."""
    if result.frame_p_human is None:
        return list(items)
    return list(items) + [(FRAME_ITEM, FrameContribution(float(result.frame_contribution)))]


def _dimension_rows():
    """(category roman, id) in the paper's order; falls back to ids if dimensions.py is absent."""
    try:
        from livejudge.judge.model.dimensions import DIMENSIONS

        rows = []
        last = None
        for d in DIMENSIONS:
            cat = str(getattr(d, "category", "")).split(" ")[0]
            rows.append((cat if cat != last else "", d.id))
            last = cat
        return rows
    except ImportError:
        return [("", k) for k in SHORT_NAMES]


def sparkline(values: list[float], width: int = 16) -> str:
    """Unicode sparkline of values in [0, 1] (last ``width`` values)."""
    vals = values[-width:]
    return "".join(SPARK[min(len(SPARK) - 1, max(0, int(v * (len(SPARK) - 1) + 0.5)))] for v in vals)


UNIT_SHORT = {"words": "w", "word": "w", "turns": "t", "turn": "t"}

LEGEND = "··3·· gated · 4s<min = 4 s heard, below the minimum · s/w/t = sec/words/turns"
"""The meter's legend line: the gated marker, the evidence column's "<min" and its units (``legend``
names only the units the rows show)."""
_UNIT_WORDS = {"s": "sec", "w": "words", "t": "turns"}


def legend(units: set[str] | None = None) -> str:
    """``LEGEND`` with only the evidence units the rows show ("s = sec" where every row is in
    seconds: "s/w/t" named units no row used; a trial). Pure."""
    shown = [u for u in _UNIT_WORDS if units is None or u in units] or ["s"]
    return (f"··3·· gated · 4{shown[0]}<min = 4 {_UNIT_WORDS[shown[0]]} heard, below the minimum · "
            f"{'/'.join(shown)} = {'/'.join(_UNIT_WORDS[u] for u in shown)}")

CONTRIBUTION_UNIT = " (log-odds)"
"""Unit of the contributions on the "pulls towards" line: z × classifier weight, added to the logit."""


def fmt_evidence(amount: float, unit: str) -> str:
    """Compact evidence: "12s", "80w" (words), "3t" (turns)."""
    return f"{amount:.0f}{UNIT_SHORT.get(unit, unit)}"


def fmt_s(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def elide(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by an ellipsis in the middle (keeps the file's
    extension and the start of its name)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:max(width, 0)]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


@dataclass(frozen=True)
class SharedContribution:
    """The pull of dimensions that share one learned score, shown as one item on the "pulls
    towards" line: the sum of the members' contributions (log-odds), under the first member's id."""

    contribution: float
    n_members: int


def merge_shared(items: list, view: dict | None) -> list:
    """``items`` ((dimension id, DimensionScore-like with ``.contribution``) of one window) with the
    members of each shared-score group of ``view`` (``Judge.info()["dimensions"]["groups"]``) merged
    into one item under the group's first id whose contribution is their sum, so that one score is
    not named two or three times as if it were separate evidence. Without a view: ``items``."""
    if not view:
        return list(items)
    lead = {d: g[0] for g in view.get("groups", []) if len(g) > 1 for d in g}
    out, merged = [], {}
    for k, v in items:
        if k not in lead:
            out.append((k, v))
            continue
        total, n = merged.get(lead[k], (0.0, 0))
        merged[lead[k]] = (total + float(v.contribution), n + 1)
    out += [(k, SharedContribution(c, n)) for k, (c, n) in merged.items()]
    return out


def top_line(top: list, width: int = 80):
    """The strongest contributions of a window in words, as many as fit ``width``:
    "pulls towards machine: intonation 1.11, stress 1.03 · towards human: rhythm 0.37"
    (a contribution is the dimension's standardised output times its classifier weight,
    the Turing-test paper, App. E)."""
    from rich.text import Text

    groups = [("pulls towards machine: ", "red", [(k, v) for k, v in top if v.contribution > 0]),
              ("towards human: ", "green", [(k, v) for k, v in top if v.contribution <= 0])]
    t = Text()
    for label, style, items in groups:
        first = True
        for k, v in items:
            more = getattr(v, "n_members", 1) - 1  # a shared score: its first member's name, "+N" others
            item = f"{SHORT_NAMES.get(k, k)}{f'+{more}' if more > 0 else ''} {abs(v.contribution):.2f}"
            lead = (label if first else ", ")
            sep = " · " if first and t.plain else ""
            if len(t.plain) + len(sep) + len(lead) + len(item) > width:
                break
            t.append(sep, style="dim")
            t.append(lead, style=style if first else "")
            t.append(item)
            first = False
    return t


def top_contributors(result: JudgeResult, info: dict | None, n: int = 3) -> list:
    """The ``n`` strongest pulls of one judged window, strongest first, for ``top_line``: its ungated
    dimensions (those sharing one learned score as one item, ``merge_shared`` with the judge's
    ``info()["dimensions"]``) and the frame readout where the head has one (``with_frame_item``);
    contributions in log-odds."""
    items = merge_shared([(k, v) for k, v in result.dimensions.items() if not v.gated],
                         info.get("dimensions") if info else None)
    return sorted(with_frame_item(items, result), key=lambda kv: -abs(kv[1].contribution))[:n]


class Meter:
    """Rich live meter over a session. Use as a sink: ``session.add_sink(meter)``; ``start()``
    before streaming, ``stop()`` after ``close()``.

    Args:
        session: the Session to show.
        title: what is being judged (e.g. "replay call.wav").
        console: a rich Console (default: stdout).
        refresh_per_second: redraw rate.
        log_lines: turn-log length.
        report: the HTML report this call writes, or None: where dimension notes cut for room
            point to ("more in the report", else "more with --report").
    """

    def __init__(self, session: "Session", title: str = "", console=None,
                 refresh_per_second: float = 4.0, log_lines: int = 8, report: str | None = None) -> None:
        from rich.console import Console

        self.session = session
        self.title = title
        self.report = report
        self.console = console or Console()
        self.refresh_per_second = refresh_per_second
        self.log_lines = log_lines
        self._live = None
        self._dims = _dimension_rows()
        # a taller terminal gives the frame its lines (dimension notes, turn log); 80×24 keeps 22
        self.height = max(Meter.height, int(getattr(self.console, "height", 24) or 24) - 2)

    width = 80
    """The meter's layout width in columns (it fits an 80×24 terminal)."""
    height = 22
    """The meter's smallest frame height budget in lines: an 80×24 terminal keeps the whole final
    frame on screen with the summary line printed after it and the cursor line; the turn log (then
    the dimension notes) shrink to keep the frame inside it. A taller terminal's budget is its
    height − 2 (set per meter from its console)."""

    def _footer(self, info: dict | None, gated: bool = True) -> list:
        """The footer: the gated marker's legend (when a row is ``gated``) and, whole and wrapped, what P(human) was
        validated against (or the PRIOR warning)."""
        import textwrap

        from rich.text import Text

        # the legend of "··3··" and "4s<min" when a row shows them (a line the validity line may need)
        out = [Text(legend(getattr(self, "_units_shown", None))[:self.width], style="dim")] if gated else []
        if info and str(info.get("provenance", "")).lower() == "prior":
            out.append(Text("PRIOR head (set from published human figures, not trained)", style="yellow"))
        elif info and info.get("validated"):
            # at spaces only: a family's name ("ar-mel-neural-vocoder") is never cut at its hyphens
            out += [Text(x, style="yellow") for x in textwrap.wrap(str(info["validated"]), self.width,
                                                                   break_on_hyphens=False)]
        return out

    # sink interface (the meter reads the session when it draws; events need no handling)
    def on_event(self, event: object) -> None:
        pass

    def on_close(self, result: dict) -> None:
        pass

    def start(self) -> "Meter":
        from rich.live import Live

        # transient: on stop the live area is erased and the final frame printed once as plain
        # output (below), so it stays in the scrollback instead of leaving stale header lines
        # when the frame is as tall as the terminal; stderr lines go above the live area
        self._live = Live(self, console=self.console, refresh_per_second=self.refresh_per_second,
                          transient=True, redirect_stderr=True, vertical_overflow="crop")
        self._live.start()
        return self

    def stop(self) -> None:
        """Erase the live area and print the final frame as normal output. Idempotent, and safe
        to call from a Ctrl-C handler."""
        live, self._live = self._live, None
        if live is not None:
            try:
                live.stop()
            finally:
                self.console.print(self.render())

    # rendering
    def __rich__(self):
        return self.render()

    def render(self):
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        s = self.session
        sm = s.summary
        res = s.judge_results
        latest = res[-1] if res else None
        info = s.judge.info() if s.judge is not None and hasattr(s.judge, "info") else None
        speaking = s.speaking

        tail = Text(f"t={s.now_s:6.1f}s  ")
        for c in ("user", "agent"):
            on = speaking[c]
            tail.append(f"{c} ", style="bold" if on else "dim")
            tail.append("● " if on else "○ ", style="green" if on else "dim")
        if info:  # which head (and version) judges; the backbone only when the judge names no head
            tail.append(f" {judge_label(info)}", style="dim")
        head = Text()
        head.append("livejudge", style="bold cyan")
        room = self.width - len("livejudge") - len(tail.plain) - 5  # " · " + two spaces
        head.append(f" · {elide(self.title, room)}  " if self.title and room >= 8 else "  ")
        head.append_text(tail)
        head.truncate(self.width)
        lines = [head]

        gauge = Text()
        width = 24
        if latest is not None and latest.has_evidence:
            p = latest.p_human
            fill = int(round(p * width))
            gauge.append(f"P(human) {p:4.2f} ", style="bold")
            for i in range(width):
                if i == width // 2:
                    gauge.append("│", style="bold white")
                gauge.append("█" if i < fill else "░", style=("green" if p >= 0.5 else "red") if i < fill else "dim")
            gauge.append("  human-like" if p >= 0.5 else "  machine-like", style="green" if p >= 0.5 else "red")
            gauge.append("  trend " + sparkline([r.p_human for r in res if r.has_evidence], 12), style="cyan")
        else:
            gauge.append("P(human)  –   " + "░" * (width // 2) + "│" + "░" * (width // 2), style="dim")
            agent_heard = speaking["agent"] or sm.agent_talk_s > 0
            why = ("judge off" if s.judge is None else "waiting for the first window" if latest is None
                   else "too little agent speech yet" if agent_heard
                   else "no evidence yet (agent silent)")
            gauge.append(f"  {why}", style="dim")
        lines.append(gauge)
        if latest is not None and latest.has_evidence:
            top_text = top_line(top_contributors(latest, info), self.width - len(CONTRIBUTION_UNIT))
            if top_text.plain:
                top_text.append(CONTRIBUTION_UNIT, style="dim")
            lines.append(top_text)

        view = info.get("dimensions") if info else None
        dims = Table.grid(padding=(0, 1))
        dims.add_column(width=3, style="dim")
        dims.add_column(width=17, no_wrap=True)
        dims.add_column(width=5, no_wrap=True)
        dims.add_column(width=3, justify="right")
        dims.add_column(width=8, no_wrap=True, style="dim")
        n_dim_lines, any_gated = 0, False
        self._units_shown: set[str] = set()  # the evidence units the rows show, for the legend
        for cat, dim_id, name in dimension_rows(self._dims, view):
            d = latest.dimensions.get(dim_id) if latest else None
            n_dim_lines += 1
            if d is not None and d.evidence > 0:
                self._units_shown.add(UNIT_SHORT.get(d.evidence_unit, d.evidence_unit))
            if d is None:
                dims.add_row(cat, Text(name, style="dim"), Text("·····", style="dim"), "", "")
            elif d.gated:
                any_gated = True
                ev = "no data" if d.evidence <= 0 else fmt_evidence(d.evidence, d.evidence_unit) + "<min"
                # no score beside the gated marker ("··3··   3" read as a score twice; a trial)
                dims.add_row(cat, Text(name, style="dim"), Text("··3··", style="dim"), Text("–", style="dim"),
                             Text(ev[:8], style="dim"))
            else:
                lvl = int(round(d.score))
                bar = "■" * lvl + "□" * (5 - lvl)
                style = "red" if d.score < 2.5 else ("green" if d.score > 3.5 else "yellow")
                dims.add_row(cat, name, Text(bar, style=style), f"{d.score:.1f}",
                             fmt_evidence(d.evidence, d.evidence_unit)[:8])
        notes = dimension_notes(view, 39)
        room = self.height - len(lines) - len(self._footer(info, any_gated)) - n_dim_lines
        if len(notes) > room:  # keep the frame inside the terminal: cut the notes, say so
            more = "  … (more in the report)" if self.report else "  … (more with --report)"
            notes = whole_notes(notes, max(0, room - 1)) + ([more] if room >= 1 else [])
        left = Group(dims, *(Text(line, style="dim", no_wrap=True) for line in notes))

        # the timing column's rows; a row with a rank is dropped (rank 1 first) when the frame
        # would not fit the terminal otherwise: a long validity line needs its lines (a head's
        # line grew by one and the frame overflowed 80×24)
        trows: list[tuple[object, int | None]] = []
        tadd = lambda row, rank=None: trows.append((row, rank))  # noqa: E731
        lat = s.timeline.response_latencies_s
        last = lat[-1] if lat else None
        band_style = "green" if last is not None and last <= RESPONSE_LATENCY_HUMAN.high_s else (
            "yellow" if last is not None and last < S2S_LATENCY_RANGE.low_s else "red")
        lt = Text("response latency ")
        lt.append(f"last {fmt_s(last)} s", style=band_style if last is not None else "dim")
        tadd(lt)
        tadd(f"  p50 {fmt_s(sm.latency_p50_s)} s  p90 {fmt_s(sm.latency_p90_s)} s  "
             f"({sm.latency_count} {'reply' if sm.latency_count == 1 else 'replies'})")
        tadd(Text(f"  human ≤{RESPONSE_LATENCY_HUMAN.high_s:.2f} s · S2S "
                  f"{S2S_LATENCY_RANGE.low_s:.2f}–{S2S_LATENCY_RANGE.high_s:.2f} s", style="dim"), 2)
        # verdicts are counted once settled (later audio can no longer change them): a barge-in
        # still in progress reads "talked through" until the agent's yield is heard
        settled = s.settled_verdicts
        n_bi, through, yield_mean = barge_in_counts(settled)
        # no yield to average yet reads "–", not "– s" (a trial)
        tadd(f"user barge-ins {n_bi} · agent yield "
             + (f"{fmt_s(yield_mean)} s" if yield_mean is not None else "–"))
        tadd(Text(f"  agent talked through {through} of them",
                  style="" if through else "dim"))
        tadd(talk_over_row(settled, sm.overlap_ratio, 39))
        tr = f"{sm.talk_ratio * 100:.0f}%" if sm.talk_ratio is not None else "–"
        # the caller's "mm"s and the agent's apart: only the agent's say something about the agent
        tadd(f"backchannels user {sm.user_backchannel_count} · agent {sm.agent_backchannel_count}")
        tadd(Text(f"  agent talk share {tr}", style="dim"), 1)
        # per-event verdicts counted as moments (livejudge.timing.verdicts.moments), as the report does
        settled_keys = {v.key for v in settled}
        pending = sum(1 for m in moments(s.verdicts) if not any(v.key in settled_keys for v in m))
        line = verdicts_row(settled, pending, 39)
        tadd(Text(line, style="red" if any(not v.ok for v in settled) else "dim"))
        ms = f"{latest.compute_s * 1000:.0f} ms" if latest else "–"
        # one row (the validity line below needs the frame's lines): windows judged, the judge's
        # compute per window, and windows dropped under load only when there are some
        lost = int(getattr(s.judge, "unavailable_windows", 0) or 0)  # a judge service that stopped answering
        tadd(Text(f"judge: {len(res)} window{'' if len(res) == 1 else 's'} · "
                  + (f"{lost} not judged" if lost else f"{ms} each")  # the column holds one of them
                  + (f" · {s.dropped_windows} dropped" if s.dropped_windows else ""),
                  style="yellow" if s.dropped_windows or lost else "dim"))
        foot = self._footer(info, any_gated)
        # the frame fits the terminal (``height``): the turn log gets what the rest leaves
        fixed = len(lines) + len(foot)
        for rank in (1, 2):
            if fixed + len(trows) > self.height:
                trows = [(r, k) for r, k in trows if k != rank]
        tim = Table.grid(padding=(0, 1))
        tim.add_column(no_wrap=True)
        for row, _ in trows:
            tim.add_row(row)
        n_tim = len(tim.rows) + 1  # + the "── turns ──" header
        log_n = max(0, min(self.log_lines, self.height - 1 - fixed - n_tim))
        if log_n > 0:
            tim.add_row(Text("── turns ──", style="dim"))
            for line in recent_turn_log(s.timeline, log_n):
                tim.add_row(Text(line, style="dim" if "backchannel" in line else ""))

        body = Table.grid(padding=(0, 2))
        body.add_column(width=39)
        body.add_column(width=39)
        body.add_row(left, tim)
        lines.append(body)
        lines.extend(foot)
        return Group(*lines)


def verdicts_row(settled: list, pending: int, width: int) -> str:
    """The meter's row of the settled per-event verdicts counted as moments, as the HTML report
    counts them (``livejudge.timing.verdicts.moments``: one event judged twice, such as a reply
    after dead air, is one moment): "flagged moments: 1 (2 verdicts) of 3 · 1 pending" (the flagged verdicts in brackets
    only when they are more than the flagged moments; ``pending``: moments whose verdicts later
    audio can still change). Shortened to fit ``width`` columns: the bracket goes first, then
    the words."""
    ms = moments(settled)
    n_m = sum(1 for m in ms if any(not v.ok for v in m))
    n_v = sum(1 for v in settled if not v.ok)
    pend = f" · {pending} pending" if pending else ""
    rows = ([f"flagged moments: {n_m} ({n_v} verdicts) of {len(ms)}{pend}"] if n_v != n_m else []) + [
        f"flagged moments: {n_m} of {len(ms)}{pend}", f"flagged moments {n_m}/{len(ms)}{pend}"]
    return next((r for r in rows if len(r) <= width), rows[-1])


def barge_in_counts(settled: list) -> tuple[int, int, float | None]:
    """(user barge-ins, those the agent talked through, mean yield time in seconds or None) from
    the settled per-event verdicts (``Session.settled_verdicts``): counted once later audio can no
    longer change them, so the meter's count never goes back (a new user's trial saw the live
    timeline's count go 1 → 2 → 1 as a turn was re-read). At the end of a call every verdict has
    settled and these equal the result's ``user_barge_in_count``, ``yield_none_count`` and
    ``yield_mean_s``."""
    bis = [v for v in settled if v.kind == "barge_in"]
    through = sum(1 for v in bis if v.outcome == "talked_through")
    ys = [float(v.value_s) for v in bis if v.outcome != "talked_through" and v.value_s is not None]
    return len(bis), through, (sum(ys) / len(ys) if ys else None)


def talk_over_row(settled: list, overlap_ratio: float, width: int) -> str:
    """The meter's row of the agent's starts in the caller's speech, counted as the settled
    verdicts judge them (``talk_over_counts``), and the overlap: "talk-overs 1 (+2 early) · overlap
    7.0%" (talk-overs flagged; early starts, the caller ending within ``talk_over_grace_s``, are
    human-like). The overlap (share of speech time, %) loses its decimal when the row would pass
    ``width`` columns."""
    over, early = talk_over_counts(settled)
    row = f"talk-overs {over} (+{early} early) · overlap {overlap_ratio * 100:.1f}%"
    return row if len(row) <= width else f"talk-overs {over} (+{early} early) · overlap {overlap_ratio * 100:.0f}%"


def judge_label(info: dict) -> str:
    """The judge in the meter's header: the head's name and version from ``Judge.info()``
    (e.g. "whisper-fitted" and the version in its config.json; the head fixes its backbone), or the
    backbone when the judge names no head (a judge service not reached yet)."""
    if info.get("head"):
        return f"{info['head']} {info.get('head_version', '')}".strip()
    return str(info.get("backbone", ""))


def dimension_counts(result: JudgeResult, view: dict | None) -> tuple[int, int, int | None]:
    """(gated, measured, not measured) dimensions of one judged window, for the plain line.

    Not measured: the head has no feature or weight of its own for the dimension
    (``view["not_measured"]``, i.e. ``Judge.info()["dimensions"]``). Its DimensionScore is
    ``gated`` in every window, with whatever reason the gate gave first (often the backbone's "no
    signal"), so only the view tells it apart from a measured dimension gated for too little
    evidence this window (``gated``). Without a view (a judge that does not say what it
    measures) every dimension counts as measured and not measured is None (unknown).
    """
    off = set(view["not_measured"]) if view and isinstance(view.get("not_measured"), dict) else None
    not_measured = None if off is None else sum(1 for d in result.dimensions if d in off)
    gated = sum(1 for d, x in result.dimensions.items() if x.gated and (off is None or d not in off))
    return gated, len(result.dimensions) - (not_measured or 0), not_measured


def dimension_rows(rows: list, view: dict | None) -> list[tuple[str, str, str]]:
    """The meter's dimension rows: (category, id, label). Without a ``view`` (a judge that does
    not say what it measures) all 18 rows; with ``Judge.info()["dimensions"]`` only the measured
    dimensions, one row per group sharing a learned score (``group_label``: the first member and
    how many more share its score, named in ``dimension_notes``)."""
    if not view:
        return [(cat, d, SHORT_NAMES.get(d, d)[:17]) for cat, d in rows]
    cat_of, last_cat = {}, ""
    for cat, d in rows:
        last_cat = cat or last_cat
        cat_of[d] = last_cat
    out, shown_cat = [], None
    for group in view.get("groups", []):
        first = group[0]
        cat = cat_of.get(first, "")
        out.append((cat if cat != shown_cat else "", first, group_label(group)))
        shown_cat = cat
    return out


def group_label(group: list[str]) -> str:
    """A dimension row's label, at most 17 columns: the short name of a group's first dimension,
    and "+N" when N more share its learned score ("breathing/mouth+2"; the report says
    "micro-physiological noise (+2 sharing its score)")."""
    suffix = f"+{len(group) - 1}" if len(group) > 1 else ""
    return SHORT_NAMES.get(group[0], group[0])[:17 - len(suffix)] + suffix


def whole_notes(lines: list[str], room: int) -> list[str]:
    """The first notes of ``lines`` (a note: a line and its "  "-indented continuations) that fit
    ``room`` lines whole: a note cut mid-sentence ("breathing/mouth+2: 2 more sharing its") read as
    broken (a trial). Pure."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i + 1
        while j < len(lines) and lines[j].startswith("  "):
            j += 1
        if len(out) + (j - i) > room:
            break
        out += lines[i:j]
        i = j
    return out


def dimension_notes(view: dict | None, width: int) -> list[str]:
    """Lines under the dimension rows saying which dimensions share one score ("breathing/mouth+2: 2
    more sharing its score (pronunc. instab., accent)": the row's "+2") and which are not measured,
    and why (wrapped to ``width`` columns)."""
    if not view:
        return []
    import textwrap

    out = []
    for group in view.get("groups", []):
        if len(group) > 1:  # what "+N" on the row means, in the report's words
            text = (f"{group_label(group)}: {len(group) - 1} more sharing its score ("
                    + ", ".join(SHORT_NAMES.get(d, d) for d in group[1:]) + ")")
            out += textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)
    short = {"the head reads no text": "head reads no text", "no feature of its own in the head": "no own feature"}
    by_reason: dict[str, list[str]] = {}
    for d, why in view.get("not_measured", {}).items():
        key = "almost no weight" if why.startswith("almost no weight") else short.get(why, why)
        by_reason.setdefault(key, []).append(SHORT_NAMES.get(d, d))
    for why, names in by_reason.items():
        out += textwrap.wrap(f"not measured, {why}: " + ", ".join(names), width, subsequent_indent="  ",
                             break_on_hyphens=False)
    return out


def recent_turn_log(timeline, n: int) -> list[str]:
    """The last ``n`` turn-taking events of a timeline as log lines, oldest first."""
    events = list(timeline.transitions) + list(timeline.barge_ins) + list(timeline.backchannels)
    events.sort(key=lambda e: getattr(e, "to_onset_s", None) or getattr(e, "onset_s", 0.0))
    return [line for line in (turn_log_line(e) for e in events[-n:]) if line]


def turn_log_line(event: object) -> str | None:
    """One short line for the turn log, or None for events it does not show."""
    if isinstance(event, Transition):
        kind = "latency" if event.is_response else "gap"
        note = " overlap" if event.gap_s < 0 else ""
        return f"{event.to_onset_s:6.1f} {event.from_channel[0]}→{event.to_channel[0]} {kind} {event.gap_s:+.2f}s{note}"
    if isinstance(event, BargeIn):
        # worded as the verdicts word it (livejudge.timing.verdicts): a user barge-in is yielded to or
        # talked through; an agent start inside user speech is an early start or a talk-over by how
        # soon the user ends, so the event line says only when the user ended, not "yielded"
        if event.by == "agent":
            y = "user kept talking" if event.yield_s is None else f"user ended {event.yield_s:.2f}s later"
            return f"{event.onset_s:6.1f} agent started in user speech: {y}"
        y = "agent talked through" if event.yield_s is None else f"agent yielded {event.yield_s:.2f}s"
        return f"{event.onset_s:6.1f} barge-in: {y}"
    if isinstance(event, Backchannel):
        return f"{event.onset_s:6.1f} {event.channel} backchannel"
    if isinstance(event, Verdict):
        return verdict_text(event)
    return None


TIMING_AT_LAG_S = 1.0
"""A plain line whose timing counts are this much past its judge window's end, seconds, says when
they were read (``timing-at=``): the judge runs beside the audio, so at ``--speed max`` a window's
result arrives after later audio was measured."""


class PlainLines:
    """Plain periodic status lines (stdout not a TTY): one line per judged window (ending, when the
    window has evidence, with the rich meter's "pulls towards machine: … · towards human: …
    (log-odds)"), plus the turn-taking events as they settle. Wrapped at ``width`` (default: the terminal's) only when
    the stream is a terminal or ``width`` is given; piped, each record is one line."""

    def __init__(self, session: "Session", stream: TextIO | None = None, events: bool = True,
                 width: int | None = None) -> None:
        import shutil

        self.session = session
        self.stream = stream or sys.stdout
        self.events = events
        # a terminal: wrap at its width; a pipe, file or CI log: one record per line (grep-able)
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.width = width if width is not None else (shutil.get_terminal_size((80, 24)).columns if isatty() else 0)
        self._lock = threading.Lock()
        self._said_validity = False
        self.closed = False
        """True once the stream's reader went away (``| head`` exited): nothing more is printed."""

    def _print(self, text: str) -> None:
        import textwrap

        from livejudge.outputs.guard import is_closed_pipe, stdout_closed

        if self.closed:
            return
        # wrap between fields (never inside a word); continuation lines are indented
        if not self.width:
            lines = [text]
        else:
            lines = textwrap.wrap(text, width=max(self.width, 40), subsequent_indent="    ",
                                  break_long_words=False, break_on_hyphens=False)
        with self._lock:
            try:
                print("\n".join(lines), file=self.stream, flush=True)
            except (OSError, ValueError) as exc:
                if not is_closed_pipe(exc):
                    raise
                # its reader has what it wanted (`score --display plain | head`): the display stops
                # here, quietly, and the call goes on to write its results (a trial: "sink PlainLines
                # failed: [Errno 32] Broken pipe" three times)
                self.closed = True
                if self.stream is sys.stdout:
                    stdout_closed()

    def on_event(self, event: object) -> None:
        if isinstance(event, JudgeResult):
            judge = self.session.judge
            # read per window, once: a judge service's info fills in once it is reached
            info = judge.info() if judge is not None and hasattr(judge, "info") else None
            if not self._said_validity and info is not None:
                self._said_validity = True
                line = info.get("validated")
                if line:  # whose validity: the head and its version first
                    self._print(f"judge {judge_label(info)} {line}")
            sm = self.session.summary
            settled = self.session.settled_verdicts
            n_bi, _, yield_mean = barge_in_counts(settled)
            # the settled verdicts counted as moments, as the rich meter's row (a reader counting the
            # [FLAG] event lines counts verdicts: a reply after dead air is two; a new user's trial)
            ms = moments(settled)
            n_flag = sum(1 for m in ms if any(not v.ok for v in m))
            view = info.get("dimensions") if info is not None else None
            gated, measured, not_measured = dimension_counts(event, view)
            nm = "–" if not_measured is None else str(not_measured)
            ph = f"{event.p_human:.2f}" if event.p_human is not None else "–\u00a0(no\u00a0evidence)"
            lat = self.session.timeline.response_latencies_s
            # what pulls P(human) most, as the rich meter's line says it (whole: a record is one line)
            pulls = top_line(top_contributors(event, info), 10_000).plain if event.has_evidence else ""
            # the timing counts are the session's now, which a window judged late (--speed max: the
            # judge never holds up audio) is seconds past; a trial read a reply of t=35.8 s on the
            # t=32.0 s line. Said where they lag the window by TIMING_AT_LAG_S or more
            lag = self.session.now_s - event.t_s
            at = f"timing-at={self.session.now_s:.1f}s " if lag >= TIMING_AT_LAG_S else ""
            self._print(
                f"[t={event.t_s:7.1f}s] P(human)={ph} {at}"
                f"latency last={fmt_s(lat[-1] if lat else None)}s "
                f"p50={fmt_s(sm.latency_p50_s)}s p90={fmt_s(sm.latency_p90_s)}s replies={sm.latency_count} "
                f"user-barge-ins={n_bi} agent-yield={fmt_s(yield_mean)}s "
                f"overlap={sm.overlap_ratio * 100:.1f}% "
                f"user-backchannels={sm.user_backchannel_count} agent-backchannels={sm.agent_backchannel_count} "
                f"gated-dimensions={gated}/{measured} not-measured={nm} "
                f"flagged-moments={n_flag}/{len(ms)} dropped-windows={self.session.dropped_windows}"
                + (f" · {pulls}{CONTRIBUTION_UNIT}" if pulls else "")
            )
        elif self.events:
            line = turn_log_line(event)
            if line:
                # printed once final (later audio cannot change it), which can be seconds after it
                # happened: the line leads with the event's own time and says when it became final
                tag = "verdict" if isinstance(event, Verdict) else "event"
                self._print(f"[{tag}] {line.strip()} (final at t={self.session.now_s:.1f}s)")

    def on_close(self, result: dict) -> None:
        pass

    def start(self) -> "PlainLines":
        return self

    def stop(self) -> None:
        pass


def make_display(session: "Session", title: str = "", mode: str = "auto", report: str | None = None,
                 stream: TextIO | None = None):
    """The meter for a TTY, plain lines otherwise. mode: "auto", "rich", "plain" or "none";
    report: the HTML report the call writes, or None (``Meter``); stream: where the display goes
    (default stdout; stderr when stdout carries the result, ``--json -``)."""
    if mode == "none":
        return None
    out = stream if stream is not None else sys.stdout
    if mode == "rich" or (mode == "auto" and out.isatty()):
        from rich.console import Console

        return Meter(session, title, console=Console(file=stream) if stream is not None else None, report=report)
    return PlainLines(session, stream=out)


def render_text(session: "Session", title: str = "", width: int = 80, height: int = 24,
                report: str | None = None) -> str:
    """The meter as plain text at a given terminal size (for docs, tests and screenshots);
    report: the HTML report the call writes, or None (``Meter``)."""
    from rich.console import Console

    console = Console(width=width, height=height, record=True, file=open("/dev/null", "w"),
                      force_terminal=False, color_system=None)
    meter = Meter(session, title, console=console, report=report)
    console.print(meter.render())
    return console.export_text()


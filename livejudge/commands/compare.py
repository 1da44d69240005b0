"""``livejudge compare A B [...]``: side-by-side metrics of calls or batches, with the change
against the first (the baseline) and whether it moved towards or away from the human reference.

Each input is a result document (one call), or a batch: a directory written by
``score DIR --out-dir`` or its ``summary.json`` (the batch's medians over scored calls).

The rule per metric (``RULES``):

* response latency p50/p90: **closer to the human band is better** — distance to
  0–0.742 s (Stivers et al. 2009; SPEARBench Table III human row), 0 inside the band;
* response latency mean: shown without a verdict: a reply started over the caller has a negative
  latency, so one −1.8 s talk-over and a few slow replies average into the human band (a new
  user's trial: rude's mean read "better"); p50 and p90, and the talk-over rows, say it;
* gap mean (all transitions, either direction): no verdict, for the latency mean's reason: a
  talk-over is a negative gap, and rude's overlaps pulled its mean to 0.14 s, "nearer" the typical
  human gap of 0.2 s (Levinson & Torreira 2015) than polite's 0.87 s (a new user's trial);
* yield time after a barge-in, barge-ins the agent talked through, agent talk-overs (as the
  verdicts judge them: early starts excluded), caller pauses the agent cut into, caller
  backchannels the agent stopped for (false yields), flagged moments
  (``verdict_flagged_moment_count``: moments with a flagged per-event verdict, a reply after dead
  air counted once), dropped windows: lower is better (a human stops quickly, waits out a pause,
  talks on through an "mm" and does not talk over);
* mean P(human) and each dimension score (1 machine-like … 5 human-like): higher is better; between
  single calls scored by the head whose spread was measured (``judge_tolerance``), a change within
  the between-call spread of one agent voice is "same" (two calls of an unchanged agent differ by
  more than a shown digit);
  dimensions the judge's view (``judge_info.dimensions``) groups as one learned score are one row
  (its first member, "+N sharing its score"), and one no column's head measures says so;
* backchannels, the agent's and the caller's apart: no verdict. The caller's are the caller's; the
  agent's are short agent utterances that do not take the turn (HEURISTIC), and a reply the agent
  starts and drops after a fraction of a second is one too (the demo's rude agent gets one that
  way), so "more is better" would reward false starts;
* user barge-ins, agent early starts (the caller ended within the verdicts' grace: human-like,
  people start a third of their answers early, SPEARBench Table III), overlap ratio, agent share of
  talk, counts: shown without a verdict (they depend on the user and the task as much as on the agent).

A column whose response latency is better while its flagged moments are worse gets a note
(``tradeoff_notes``): a quick answer that comes from not waiting for the caller (cutting into
pauses, talking over) is no gain, and the latency row alone would say it is.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from livejudge.timing.metrics import (
    MEASURED_TIMING_ERROR, MEASURED_TIMING_ERROR_NARROWBAND, RESPONSE_LATENCY_HUMAN, TYPICAL_GAP_S,
)


@dataclass(frozen=True)
class Rule:
    """How to judge a change: kind "band" (closer to [low, high] is better), "higher", "lower", or
    "none" (no verdict)."""

    kind: str
    text: str
    low: float = 0.0
    high: float = 0.0
    short: str = ""

    def distance(self, v: float) -> float:
        if self.kind == "band":
            return 0.0 if self.low <= v <= self.high else min(abs(v - self.low), abs(v - self.high))
        if self.kind == "higher":
            return -v
        if self.kind == "lower":
            return v
        raise ValueError(self.kind)

    def verdict(self, base: float | None, new: float | None, tol: float = 1e-3) -> str:
        """"better", "worse", "same" (distance changed by at most ``tol``), or "" (no rule or
        a value missing)."""
        if self.kind == "none" or base is None or new is None:
            return ""
        d0, d1 = self.distance(base), self.distance(new)
        if abs(d1 - d0) <= tol:
            return "same"
        return "better" if d1 < d0 else "worse"


_LAT = Rule("band", f"closer to the human band {RESPONSE_LATENCY_HUMAN.low_s:g}–{RESPONSE_LATENCY_HUMAN.high_s:g} s "
                    "is better, anywhere inside it the same (Stivers 2009; SPEARBench)", RESPONSE_LATENCY_HUMAN.low_s, RESPONSE_LATENCY_HUMAN.high_s,
            f"nearer {RESPONSE_LATENCY_HUMAN.low_s:g}–{RESPONSE_LATENCY_HUMAN.high_s:g} s")
_NONE = Rule("none", "no verdict (depends on the user and task)", short="no verdict")

RULES: dict[str, Rule] = {
    "latency_p50_s": _LAT,
    "latency_p90_s": _LAT,
    "latency_mean_s": Rule("none", "no verdict: a reply started over the caller counts negative, so talk-overs "
                                   "and slow replies average out; read p50, p90 and the talk-over rows",
                           short="no verdict"),
    "latency_count": _NONE,
    "gap_mean_s": Rule("none", f"no verdict: overlaps count negative, so talk-overs and slow replies average "
                               f"towards the typical human gap {TYPICAL_GAP_S:g} s (Levinson & Torreira 2015); "
                               "read the latency percentiles and the talk-over rows", short="no verdict"),
    "barge_in_count": _NONE,
    "user_barge_in_count": _NONE,
    "yield_mean_s": Rule("lower", "lower is better (the agent stops sooner when interrupted)", short="lower"),
    "yield_none_count": Rule("lower", "lower is better (barge-ins the agent talked through)", short="lower"),
    "agent_talk_over_count": Rule("lower", "lower is better (the agent starting over the user)", short="lower"),
    "agent_early_start_count": _NONE,
    "verdict_pause_cut_in_count": Rule("lower", "lower is better (the agent started in a caller's pause and the "
                                                "caller went on)", short="lower"),
    "verdict_backchannel_yielded_count": Rule("lower", "lower is better (the agent stopped for a caller's "
                                                       "\"mm\": a false yield)", short="lower"),
    "overlap_ratio": _NONE,
    "backchannel_count": _NONE,
    "agent_backchannel_count": Rule("none", "no verdict (HEURISTIC detection: a short agent utterance, which may "
                                            "be a reply started and dropped)", short="no verdict"),
    "user_backchannel_count": _NONE,
    "talk_ratio": _NONE,
    "verdict_flagged_moment_count": Rule("lower", "lower is better (moments the per-event verdicts flag; a reply "
                                                  "after dead air, and other events judged twice, are one moment; "
                                                  "better/worse counts only the flags beyond the timing error of "
                                                  "their threshold)", short="lower"),
    "verdict_flagged_moment_beyond_error_count": Rule("lower", "lower is better (flagged moments with a flag "
                                                               "beyond the timing error of its threshold: the "
                                                               "flagged row's better/worse reads these)", short="lower"),
    "mean_p_human": Rule("higher", "higher is better (more human-like)", short="higher"),
    "dropped_windows": Rule("lower", "lower is better (judge kept up)", short="lower"),
    "duration_s": _NONE,
}
_DIM_RULE = Rule("higher", "higher is better (1 machine-like … 5 human-like)", short="higher")

ROWS = ["duration_s", "latency_count", "latency_p50_s", "latency_p90_s", "latency_mean_s", "gap_mean_s",
        "user_barge_in_count", "yield_mean_s", "yield_none_count", "agent_talk_over_count",
        "agent_early_start_count", "verdict_pause_cut_in_count", "verdict_backchannel_yielded_count",
        "overlap_ratio",
        "agent_backchannel_count", "user_backchannel_count", "talk_ratio", "verdict_flagged_moment_count",
        # the count the flagged row's better/worse reads: "3 → 3 (+0, better)" had no row to explain it (a trial)
        "verdict_flagged_moment_beyond_error_count", "mean_p_human", "dropped_windows"]

LABELS = {
    "duration_s": "duration (s)", "latency_count": "responses measured", "latency_p50_s": "response latency p50 (s)",
    "latency_p90_s": "response latency p90 (s)", "latency_mean_s": "response latency mean (s)",
    "gap_mean_s": "gap mean, all transitions (s)", "user_barge_in_count": "barge-ins by the user",
    "yield_mean_s": "agent yield time after barge-ins it yielded to (s)", "yield_none_count": "barge-ins the agent talked through",
    "agent_talk_over_count": "agent talk-overs",
    "agent_early_start_count": "agent early starts (the user ended soon after)",
    "verdict_pause_cut_in_count": "caller pauses the agent cut into",
    "verdict_backchannel_yielded_count": "caller backchannels the agent stopped for",
    "overlap_ratio": "overlap (share of speech time)",
    "backchannel_count": "backchannels (both sides)", "agent_backchannel_count": "agent backchannels",
    "user_backchannel_count": "caller backchannels", "talk_ratio": "agent share of talk",
    "verdict_flagged_moment_count": "flagged moments (per-event verdicts)",
    "verdict_flagged_moment_beyond_error_count": "… of them beyond the timing error", "mean_p_human": "mean P(human)",
    "dropped_windows": "dropped judge windows",
}


def rule_for(metric: str) -> Rule:
    return _DIM_RULE if metric.startswith("dim_") else RULES.get(metric, _NONE)


SETTING_LABELS: dict[str, str] = {
    "config": "pipeline config", "verdict_config": "verdict thresholds", "asr": "transcripts (--asr)",
    "judge": "judge", "judge_weights": "judge weights", "echo_gate": "echo gate (--echo-gate)",
}
"""What a result was measured with (``recorded_settings``' keys, as a batch's summary.json records
them under ``settings``) → the name compare's note gives it."""

_WEIGHTS = "judge weights"
VERSION = "livejudge version"
_UNKNOWN_WHEN_MISSING = (_WEIGHTS, "echo gate (--echo-gate)", VERSION)
"""Settings that results written before livejudge recorded them lack: a missing value is unknown,
not a difference (the other settings have been in every result for long)."""


def judge_weights(ji: dict) -> str | None:
    """The judge's weights as its ``judge_info`` names them: the head's digest (``head_digest``,
    sha256 of its weights file, first 16 hex digits) and, for a head with a frame readout, that
    file's ("4ae6423b0f8afc7d + frame readout e7c3a6fe4e68aa34"); None where the judge names no
    digest (no judge, a head built in memory, a result from before livejudge recorded it)."""
    if not isinstance(ji, dict) or not ji.get("head_digest"):
        return None
    fr = ji.get("frame_readout") if isinstance(ji.get("frame_readout"), dict) else {}
    return str(ji["head_digest"]) + (f" + frame readout {fr['digest']}" if fr.get("digest") else "")


def recorded_settings(doc: dict) -> dict:
    """What one result document was measured with, keyed as ``SETTING_LABELS``: the pipeline config,
    the verdict thresholds, whether transcripts were made (``--asr``), the judge ("backbone / head
    version", None without one), its weights (``judge_weights``) and the echo gate's mode. A batch
    records those its calls shared in its summary's ``settings`` (``batch.write_summary``). Pure."""
    ji = doc.get("judge_info") or {}
    src = doc.get("source") or {}
    # the head's version too: 0.2.0 and 0.3.0 of one head score the same call differently
    version = f" {ji['head_version']}" if ji.get("head_version") else ""
    gate = src.get("echo_gate")
    # the verdict thresholds too: --yield-max-s 0.3 made one more flagged moment of the same audio,
    # and compare called it "worse" without a note (a new user's trial)
    return {"config": doc.get("config"), "verdict_config": doc.get("verdict_config"), "asr": src.get("asr"),
            "judge": None if not ji else f"{ji.get('backbone')} / {ji.get('head')}{version}",
            # a head retrained into the same --out keeps its name and version (a trial: two heads read
            # "mine 0.1.0", and compare called P(human) 0.63 → 0.74 "better" on the same audio)
            "judge_weights": judge_weights(ji),
            "echo_gate": gate.get("mode") if isinstance(gate, dict) else None}


def _settings(doc: dict) -> dict:
    """What a result was measured with, for spotting comparisons of unlike settings: the
    ``recorded_settings`` under their ``SETTING_LABELS``, the route and how the call ended."""
    src = doc.get("source") or {}
    return {**{SETTING_LABELS[k]: v for k, v in recorded_settings(doc).items()},
            # how a live call reached the bot: WebRTC's jitter buffer and Opus add to every latency, so
            # one bot over the eval wire and over WebRTC read "+0.23 s, worse" with no note (a trial)
            "route": _route(src),
            # how the call ended ("end of input", "interrupted (Ctrl-C)", "failed: …"): not a setting
            # that differs, read by cut_short_notes
            "ended": src.get("ended"),
            # a recording that ends before its header says lost its end as a stopped call did (_cut_short)
            "truncated": bool(src.get("truncated")),
            # another livejudge may measure the same audio otherwise (a trial: 0.0.9 beside 0.1.0, no note)
            VERSION: doc.get("livejudge_version"),
            # the channels its line is narrowband on, for the timing tolerance (narrowband_channels)
            LINE_CHANNELS: sorted(c for c in ((src.get("line") or {}).get("channels") or []) if c in ("user", "agent"))
            if isinstance(src.get("line"), dict) else []}


def _batch_settings(doc: dict, name: str) -> dict:
    """A batch column's settings from its summary.json (``settings``: those its calls shared, under
    ``SETTING_LABELS``; one its calls did not share reads "mixed within NAME", so it differs from any
    other column), or ``{"settings_unknown": True}`` for a summary written before batches recorded
    them. Pure."""
    rec = doc.get("settings")
    if not isinstance(rec, dict):
        return {"settings_unknown": True}
    out = {label: rec.get(k) for k, label in SETTING_LABELS.items()}
    for k in doc.get("settings_mixed") or ():
        if k in SETTING_LABELS:
            out[SETTING_LABELS[k]] = f"mixed within {name}"
    return out


def _known(col: tuple) -> bool:
    """Whether a column's settings are known: a call's always; a batch's where its summary recorded them."""
    return col[2] == "call" or (any(k != CALL_FILES for k in col[3]) and not col[3].get("settings_unknown"))


def settings_differ(cols: list[tuple], views: list[dict]) -> list[str]:
    """The settings (``SETTING_LABELS``' names, and the route) the columns with known settings
    (``_known``) were not all measured with, each with what sets it apart where a name alone would
    not say it: "judge (a different head: weights differ under one name, mine 0.1.0: A 4ae6…,
    B 9c01…)", "judge (B scored without one: …)", "transcripts (--asr) (not the same for every
    call of B)". ``cols``: ``load_column``'s tuples; ``views``: their dimension views. Pure."""
    known = [(i, c) for i, c in enumerate(cols) if _known(c)]
    letter = {i: chr(ord("A") + i) for i, _ in known}
    differ = []
    for key in ("pipeline config", "verdict thresholds", "transcripts (--asr)", "judge", "echo gate (--echo-gate)",
                "route", VERSION):
        seen = [(i, c[3].get(key)) for i, c in known]
        if key in _UNKNOWN_WHEN_MISSING:
            seen = [(i, v) for i, v in seen if v is not None]
        mixed = [letter[i] for i, v in seen if isinstance(v, str) and v.startswith("mixed within ")]
        if len(seen) > 1 and any(v != seen[0][1] for _, v in seen[1:]):
            if key == VERSION:  # which versions (a re-check: the note named none)
                differ.append(f"{key} ({', '.join(f'{letter[i]} {v}' for i, v in seen)})")
                continue
            differ.append(key + (f" (not the same for every call of {', '.join(mixed)})" if mixed else ""))
    # one judge name, other weights: a head retrained into its folder, or another head's copy
    same_name = judged_differ(cols) == "weights"
    if not any(d.startswith("judge") for d in differ) and same_name:
        weights = [(i, c[3].get(_WEIGHTS)) for i, c in known if c[3].get(_WEIGHTS) and c[3].get("judge")]
        shown = ", ".join(f"{letter[i]} {w}" for i, w in weights)
        name = str(cols[weights[0][0]][3].get("judge")).split(" / ")[-1]
        differ.append(f"judge (a different head: weights differ under one name, {name}: {shown})")
    # a column scored without a judge has no row that transcripts could move: only the judged
    # columns' views decide (a trial: check --json beside score --json blamed "transcripts")
    n_judged = sum(1 for c in cols if not _known(c) or c[3].get("judge"))
    if "transcripts (--asr)" in differ and not reads_text(views, n_judged):
        # no row depends on transcripts: timing never reads them, and no column's head measures a
        # text dimension (a new user's trial: --report turned ASR on for one call, and the note
        # blamed "part of each change" on it)
        differ.remove("transcripts (--asr)")
    unjudged = [letter[i] for i, c in known if not c[3].get("judge") and c[1].get("mean_p_human") is None]
    # a P(human) with no judge named (judge_info missing: a hand-edited or foreign result) is not
    # "scored without one" (a trial saw that beside its row of 0.00)
    unnamed = [letter[i] for i, c in known if not c[3].get("judge") and c[1].get("mean_p_human") is not None
               and c[2] == "call"]
    if "judge" in differ and unnamed:
        differ[differ.index("judge")] = (f"judge ({', '.join(unnamed)} names no judge: its judge_info is missing, "
                                         "so its P(human) cannot be traced to a head)")
    elif "judge" in differ and unjudged:  # say which column has none, and what it lacks
        also, how = "", judged_differ(cols)
        if how:  # and that the judged ones differ too (a trial: "better" between two heads)
            also = "; the judged columns differ too: " + ", ".join(
                f"{letter[i]} {str(c[3].get('judge')).split(' / ')[-1]}"
                + (f" {c[3].get(_WEIGHTS)}" if how == "weights" else "")
                for i, c in known if c[3].get("judge"))
        differ[differ.index("judge")] = (f"judge ({', '.join(unjudged)} scored without one: no P(human) or "
                                         f"dimensions there{also})")
    elif "judge" in differ:  # name them: "different judge" alone said nothing of which (a trial)
        differ[differ.index("judge")] = "judge (" + ", ".join(
            f"{letter[i]} {str(c[3].get('judge')).split(' / ')[-1]}" for i, c in known) + ")"
    return differ


def _judge_of(col: tuple) -> tuple[str, str | None] | None:
    """(judge, weights digest or None) of a column with known settings that was judged, else None."""
    if not _known(col) or not col[3].get("judge"):
        return None
    return str(col[3].get("judge")), col[3].get(_WEIGHTS)


def _same_judge(a: tuple, b: tuple) -> bool:
    """One judge: the same name, and the same weights where both record them."""
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1])


def judged_differ(cols: list[tuple]) -> str:
    """Whether the columns with known settings that were judged were judged by different judges:
    "name" (another head, version or backbone), "weights" (one name, other weights), "" (one
    judge, or fewer than two judged columns). A column scored without a judge does not count: it
    has no judge rows to compare (a trial: with one, two different heads read "better"). Pure."""
    judged = [j for j in map(_judge_of, cols) if j is not None]
    if len(judged) < 2:
        return ""
    if len({name for name, _ in judged}) > 1:
        return "name"
    return "weights" if len({w for _, w in judged if w}) > 1 else ""


def settings_differ_text(doc: dict) -> str:
    """The settings a comparison's columns differ in, for its note: each name, with the keys that
    differ where it is a config ("pipeline config (turns.merge_pause_s, vad.hangover_s)"). Pure."""
    keys = doc.get("settings_differ_keys") or {}

    def one(name: str) -> str:
        which = keys.get(name) or []
        return name + (f" ({', '.join(which[:6])}{', …' if len(which) > 6 else ''})" if which else "")

    return ", ".join(one(n) for n in doc["settings_differ"])


def _differing_keys(values: list) -> list[str]:
    """The dotted keys whose values are not the same in every one of ``values`` (dicts, e.g. each
    column's pipeline config: "vad.hangover_s", "turns.merge_pause_s"); [] when they are not all
    dicts. Pure."""
    if not values or not all(isinstance(v, dict) for v in values):
        return []

    def flat(d: dict, pre: str = "") -> dict:
        out = {}
        for k, v in d.items():
            if isinstance(v, dict):
                out.update(flat(v, f"{pre}{k}."))
            else:
                out[f"{pre}{k}"] = v
        return out

    flats = [flat(v) for v in values]
    keys = sorted(set().union(*flats))
    return [k for k in keys if any(f.get(k) != flats[0].get(k) for f in flats[1:])]


def unknown_settings_notes(doc: dict, cols: list[tuple]) -> list[str]:
    """One line per batch column whose summary.json records no settings (written before batches
    recorded them): whether it was measured as the others were is unknown, said rather than
    nothing (a trial compared batches scored with other VAD settings and saw no note). Pure."""
    notes = []
    for i, c in enumerate(cols):
        if not _known(c):
            name = f"{chr(ord('A') + i)} ({_shown(doc, i)})"
            notes.append(f"{name}: its summary.json records no settings (written before livejudge recorded them), "
                         "so whether its calls were measured with the same pipeline config, verdict thresholds and "
                         "judge as the other columns is unknown; score them again to record them")
    return notes


TRUNCATED_CALLS = "_truncated_calls"
"""A batch column's setting: the scored calls that are truncated recordings (``_cut_short``)."""


def _cut_short(col: tuple) -> str | None:
    """How a call column's call was cut short (``source.ended`` "interrupted (…)" or "failed: …", or a
    truncated recording: ``source.truncated``), or how a batch column holds truncated recordings, or
    None (every call ran to its end)."""
    ended = (col[3] or {}).get("ended") if col[2] == "call" else None
    if isinstance(ended, str) and ended.startswith(("interrupted", "failed")):
        return ended
    cut = (col[3] or {}).get(TRUNCATED_CALLS) if col[2] != "call" else None
    if cut:
        return (f"{len(cut)} of its calls {'is a truncated recording' if len(cut) == 1 else 'are truncated recordings'}"
                f" ({', '.join(cut[:3])}{', …' if len(cut) > 3 else ''}), so its medians hold a call that lost its end")
    # a truncated recording lost its end as a stopped call did (a trial: "flagged moments 3 → 1, better")
    return "truncated file: it ends before its header says" if col[2] == "call" and (col[3] or {}).get("truncated") \
        else None


def cut_short_notes(doc: dict, cols: list) -> list[str]:
    """One line per call column whose call was cut short (``source.ended`` interrupted or failed):
    its counts cover only the part before the cut, so fewer flags read "better" (a trial compared a
    20-minute call with a run of it stopped at 86.6 s: "flagged moments 107 → 7 (-100, better)").
    ``cols``: ``load_column``'s tuples, in column order. Pure."""
    notes = []
    for i, c in enumerate(cols):
        ended = _cut_short(c)
        if ended:
            name = f"{chr(ord('A') + i)} ({_shown(doc, i)})"
            if c[2] != "call":
                notes.append(f"{name}: {ended}: no row of it gets better/worse; score the whole calls again")
                continue
            dur = c[1].get("duration_s")
            at = f" after {dur:.1f} s" if isinstance(dur, (int, float)) else ""
            notes.append(f"{name}: the call was cut short ({ended}){at}: its figures cover only that part, so "
                         "fewer flags or a quicker p90 there are not an improvement (its rows have no verdict); "
                         "compare calls that ran to their end")
    return notes


def _route(src: dict) -> str | None:
    """A live call's route ("pipecat-eval", "webrtc (+102 ms)"; the runner's route where known);
    None for a recording or an embedding (no route to differ on)."""
    if src.get("kind") != "attach":
        return None
    rtc = src.get("webrtc") or {}
    route = ((src.get("runner") or {}).get("route") or src.get("protocol") or "websocket")
    if isinstance(rtc.get("added_delay_ms"), (int, float)):
        route += f" (+{rtc['added_delay_ms']:.0f} ms)"
    return route


def reads_text(views: list[dict], n_columns: int) -> bool:
    """Whether any compared row can depend on transcripts: True unless every column carries its
    judge's dimension view (``outputs.report.dimension_view``) and every view lists each text
    dimension (``TEXT_DIMENSIONS``: the ones a head could read from words) as not measured. The
    timing rows never read transcripts. Pure."""
    from livejudge.judge.features.backbones.acoustic import TEXT_DIMENSIONS

    if len(views) < n_columns:
        return True  # a column without a view (a batch, an older result): cannot tell
    return any(d not in v["not_measured"] for v in views for d in TEXT_DIMENSIONS)


def load_column(path: str | Path) -> tuple[str, dict, str, dict, dict | None]:
    """(name, metrics, kind, settings, dimension view) of one input: a result document ("call") or
    a batch ("batch of N"; settings: how many calls its medians are over where fewer than it
    scored; the view its summary's ``judge_info`` carries, None in summaries before it did).

    Raises:
        ValueError: not a result document, summary.json or batch directory (one line, with the fix).
    """
    from livejudge.commands.gates import call_metrics

    p = Path(path)
    if p.is_dir():
        p = p / "summary.json"
        if not p.exists():
            raise ValueError(f"{path}: no summary.json in this directory (write one with: "
                             f"livejudge score CALLS/ --out-dir {path})")
    from livejudge.outputs.report import DocumentError, _number, check_result_document, dimension_view, load_json_document

    doc = load_json_document(p)  # DocumentError is a ValueError: one line with the path
    if isinstance(doc, dict) and "medians" in doc and "calls" in doc:
        name = str(Path(path)) if Path(path).is_dir() else str(p.parent)
        if not isinstance(doc["medians"], dict):
            raise DocumentError(f"{p}: medians must be an object, got {type(doc['medians']).__name__}")
        for k, v in doc["medians"].items():
            _number(v, f"{p}: medians.{k}", -1e12, 1e12)
        n = doc.get("n_scored", "?")
        # what its calls were measured with (a trial: batches scored with other VAD settings, and
        # another judge, compared with no note)
        settings = _batch_settings(doc, Path(name).name)
        mc = doc.get("measured_calls")
        if isinstance(n, int) and isinstance(mc, dict):  # medians over fewer calls than were scored
            settings.update({"measured_calls": {k: v for k, v in mc.items() if isinstance(v, int) and v < n},
                             "n_scored": n})
        files = [Path(str(c.get("file"))).name for c in doc["calls"] if isinstance(c, dict)
                 and c.get("status") == "ok" and c.get("file")] if isinstance(doc["calls"], list) else []
        if files:  # which calls its medians are over, for call_set_notes (not shown as a setting)
            settings[CALL_FILES] = sorted(files)
            per = {Path(str(c["file"])).name: c["metrics"] for c in doc["calls"] if isinstance(c, dict)
                   and c.get("status") == "ok" and c.get("file") and isinstance(c.get("metrics"), dict)}
            if len(per) == len(files):  # one call per file name: paired by it (per_call_changes)
                settings[PER_CALL] = per
        from livejudge.commands.gates import truncated_row

        cut = [Path(str(c.get("file"))).name for c in doc["calls"] if truncated_row(c)] \
            if isinstance(doc["calls"], list) else []
        if cut:  # its medians hold a call that lost its end (a re-check: "worse, 1.53 → 1.98" from that alone)
            settings[TRUNCATED_CALLS] = cut
        skipped = doc.get("n_skipped")  # "medians over 3 calls" hid that 2 of 5 were not scored (a trial)
        lost = f" ({skipped} of {doc.get('n_calls', '?')} not scored)" if isinstance(skipped, int) and skipped else ""
        if isinstance(doc.get("stopped"), str):  # a batch stopped by a signal said nothing of it (a trial)
            lost += f"; stopped: {doc['stopped']}"
        return (name, dict(doc["medians"]), f"batch: medians over {n if isinstance(n, int) else '?'} call{'' if n == 1 else 's'}{lost}",
                settings, dimension_view(doc))
    if isinstance(doc, dict) and "summary" in doc:
        check_result_document(doc, str(p))
        return str(path), call_metrics(doc), "call", _settings(doc), dimension_view(doc)
    raise ValueError(f"{p}: neither a livejudge result (score --json) nor a batch summary.json")


def compare(paths: list[str | Path]) -> dict:
    """The comparison document: ``{"columns": [{name, kind}], "rows": [{metric, label, values,
    changes, verdicts, rule}], "settings_differ", "notes", "timing_tolerance_s"}``; changes and
    verdicts are against the first column; ``timing_tolerance_s`` ({metric: seconds}) holds the
    measured timing error within which a timing row's change reads "same" (``TIMING_TOLERANCE_S``),
    ``judge_tolerance`` ({metric: change}) the measured between-call spread within which a judge
    row's change reads "same" (``judge_tolerance``; empty where not measured for these columns)."""
    from livejudge.judge.model.dimensions import DIMENSIONS

    cols = [load_column(p) for p in paths]
    names = {f"dim_{d.id}": f"{d.category} {d.name}" for d in DIMENSIONS}
    # what every column's judge says of the dimensions (a batch: its summary's judge_info):
    # a group sharing one learned score is one row, its first member's, named as the meter names
    # it (three "better" rows for one piece of evidence read as three; a new user's trial); a
    # dimension no column's head measures says so
    views = [c[4] for c in cols if c[4] is not None]
    shared = [g for g in (views[0]["groups"] if views else []) if len(g) > 1 and all(g in v["groups"] for v in views)]
    dropped = {f"dim_{d}" for g in shared for d in g[1:]}
    short = {d.id: d.name for d in DIMENSIONS}
    for g in shared:
        names[f"dim_{g[0]}"] += f" (+{len(g) - 1} sharing its score: {', '.join(short.get(d, d) for d in g[1:])})"
    for d in DIMENSIONS:
        if views and all(d.id in v["not_measured"] for v in views):
            names[f"dim_{d.id}"] += NOT_MEASURED_SUFFIX
    metrics = ROWS + [f"dim_{d.id}" for d in DIMENSIONS if f"dim_{d.id}" not in dropped
                      # no column judged: 18 rows of "–" said nothing (a trial); mean P(human) stays
                      and (views or any(c[1].get(f"dim_{d.id}") is not None for c in cols))]
    judge_tol = judge_tolerance(cols)
    # a column over a telephone line: its timing rows read "same" within the narrowband error, as
    # the verdicts judge them: a latency where the caller's channel is narrowband, a yield the agent's
    lines = [narrowband_channels(c) for c in cols]
    narrow = [c[0] for c, ch in zip(cols, lines) if ch]
    # each column against the first: the narrowband error where either of the two is narrowband on
    # the row's channel (one telephone column had widened every column's "same"; a trial)
    col_tol = [timing_tolerance_for([lines[0], ch]) for ch in lines]
    timing_tol = timing_tolerance_for(lines)  # the widest any column got: the footer's
    # calls measured with different settings: the changes mix the agent's and the settings' effects
    differ = settings_differ(cols, views)
    # another judge (another head, version or weights): its P(human) and dimensions are another
    # instrument's reading, so no better/worse between them (a trial: two heads named alike read
    # "mean P(human) 0.00 → 1.00 (+1.00, better)" beside the note that their weights differ)
    # per column: a judged column whose judge is not the first column's gets no better/worse on the
    # judge rows; one judged as the first column keeps them (a trial: A and C of one head, B of
    # another, blanked C's "same" as well)
    named = any(_judge_of(c) is not None for c in cols)

    def untraced(c: tuple) -> bool:  # beside a named judge, a P(human) whose judge the result does not name
        # (a call's result names its judge whenever one ran; a batch summary before they recorded it does not)
        return named and c[2] == "call" and _judge_of(c) is None and c[1].get("mean_p_human") is not None

    other_judge = [i > 0 and (untraced(c) or untraced(cols[0]) or (
                       _judge_of(cols[0]) is not None and _judge_of(c) is not None
                       and not _same_judge(_judge_of(cols[0]), _judge_of(c)))) for i, c in enumerate(cols)]
    rows = []
    cut = [_cut_short(c) is not None for c in cols]
    for m in metrics:
        values = [c[1].get(m) for c in cols]
        rule = rule_for(m)
        base = values[0]
        changes = [None if base is None or v is None else round(v - base, 6) for v in values]
        verdicts = [verdict(m, base, v, judge_tol, t) for v, t in zip(values, col_tol)]
        if m == FLAGGED:  # better/worse on the flags noise could not have made (firm_flag_verdict)
            verdicts = [firm_flag_verdict(cols[0][1], c[1], vd) for c, vd in zip(cols, verdicts)]
        if any(cut):  # a figure over part of a call is no change of the agent: a count, and a latency
            # too (a re-check: "p90 1.98 → 1.09, better" where the slow reply was in the part cut off)
            verdicts = [v if i == 0 or not (cut[i] or cut[0]) else "" for i, v in enumerate(verdicts)]
        if m in ("mean_p_human", "last_p_human") or m.startswith("dim_"):
            verdicts = ["" if other_judge[i] else v for i, v in enumerate(verdicts)]
        rows.append({"metric": m, "label": LABELS.get(m, names.get(m, m)), "values": values,
                     "changes": changes, "verdicts": verdicts, "rule": rule.text, "rule_short": rule.short})
    # which keys of a config differ ("pipeline config" alone named no setting: a trial)
    differ_keys = {key: keys for key in ("pipeline config", "verdict thresholds") if key in differ
                   and (keys := _differing_keys([c[3].get(key) for c in cols if _known(c)]))}
    shown_names = column_names([c[0] for c in cols])
    out = {"columns": [{"name": c[0], "shown": n, "kind": c[2],
                        "settings": {k: v for k, v in c[3].items() if not k.startswith("_")}}
                       for c, n in zip(cols, shown_names)], "rows": rows,
           "settings_differ": differ, "settings_differ_keys": differ_keys,
           "timing_tolerance_s": dict(timing_tol),
           "timing_tolerance_s_by_column": [dict(t) for t in col_tol],
           "rules_are": f"{HEURISTIC_TAG}: the better/worse rules and the tolerances of 'same' are livejudge's (docs/cli.md)",
           "judge_tolerance": {m: judge_tol[m] for m in metrics if m in judge_tol}}
    out["per_call"] = per_call_changes(cols, judge_tol, other_judge)
    out["unpaired"] = unpaired_columns(cols)
    out["settings_unknown"] = [c[0] for c in cols if not _known(c)]
    out["cut_short_columns"] = [i for i, c in enumerate(cut) if c]  # worse_gates names them
    out["notes"] = ([narrowband_note(narrow)] if narrow else []) + (unknown_settings_notes(out, cols) + cut_short_notes(out, cols) + tradeoff_notes(out)
                    + flagged_mix_notes(out, [c[1] for c in cols]) + subset_notes(out) + mixed_kind_notes(out)
                    + call_set_notes(out, cols)
                    + health_notes(out, [c[1] for c in cols]))
    return out


FLAGGED, FIRM_FLAGGED = "verdict_flagged_moment_count", "verdict_flagged_moment_beyond_error_count"


def firm_flag_verdict(base: dict, new: dict, shown: str) -> str:
    """The flagged-moments row's better/worse between two metric sets: on the moments flagged
    beyond the timing error of their threshold (``FIRM_FLAGGED``; ``Verdict.within_timing_error``),
    where both have it, else ``shown`` (the total's). A latency moving 8 ms across the 0.74 s line
    on a noisier recording of one call read "flagged moments 3 → 4, worse" and failed
    ``--fail-if-worse any`` while every timing row read "same" (a trial). Pure."""
    a, b = base.get(FIRM_FLAGGED), new.get(FIRM_FLAGGED)
    if a is None or b is None or shown == "":
        return shown
    return verdict(FLAGGED, a, b)


def timing_tolerance_for(lines: list[set[str]]) -> dict[str, float]:
    """The timing rows' tolerance of "same" between calls whose narrowband channels are ``lines``
    (``narrowband_channels`` of each): ``TIMING_TOLERANCE_NARROWBAND_S`` for a latency where a
    caller's channel is narrowband in any of them, for a yield where an agent's is, else
    ``TIMING_TOLERANCE_S``. Pure."""
    return {m: (TIMING_TOLERANCE_NARROWBAND_S[m] if any(("agent" if m == "yield_mean_s" else "user") in ch
                                                        for ch in lines) else t)
            for m, t in TIMING_TOLERANCE_S.items()}


def narrowband_channels(col: tuple) -> set[str]:
    """The channels of a column's call that ``source.line`` calls narrowband (a telephone line),
    as ``_settings`` kept them; a batch, whose summary holds only the median
    ``narrowband_channel_count``, counts as both channels where that is above 0. Pure."""
    if col[2] != "call":
        return {"user", "agent"} if (col[1].get("narrowband_channel_count") or 0) > 0 else set()
    return set(col[3].get(LINE_CHANNELS) or ())


def narrowband_note(names: list[str]) -> str:
    """The note of a comparison with calls over a telephone line (``names``: those columns). Pure."""
    from livejudge.outputs.guard import clean

    t = TIMING_TOLERANCE_NARROWBAND_S
    return (f"{', '.join(clean(n) for n in names)} came over a telephone line (narrowband): latency changes "
            f"(caller's channel narrowband) within {t['latency_p50_s'] * 1000:.0f} ms and yield changes (agent's) "
            f"within {t['yield_mean_s'] * 1000:.0f} ms, the narrowband timing error (p95 |error|, "
            "benchmarks/vad_bounds.py --sets telephone), read \"same\" (HEURISTIC)")


def health_notes(doc: dict, metrics: list[dict]) -> list[str]:
    """One line per column whose input carried warnings (``input_health_warning_count``; a batch:
    the median): its changes may come from the line, not the agent (a trial compared a call on a
    −32 dBFS line, "worse" and "better" with no word of its two noisy_line warnings). Pure."""
    notes = []
    for i, m in enumerate(metrics):
        n = m.get("input_health_warning_count")
        if isinstance(n, (int, float)) and n > 0:
            name = f"{chr(ord('A') + i)} ({_shown(doc, i)})"
            # a batch's figure is the median per call ("2 warnings" read as the batch's total: a trial)
            what = (f"its calls' input carries a median of {n:g} input-health warning(s) per call"
                    if doc["columns"][i]["kind"] != "call" else f"its input carries {n:g} input-health warning(s)")
            notes.append(f"{name}: {what} (source.input_health: a noisy line, a "
                         "swap, clipping…): its figures may be off by more than the timing error, and its changes "
                         "may come from the line, not the agent")
    return notes


def flagged_mix(metrics: dict) -> dict[str, float]:
    """``{"latency s2s": 5, ...}``: a column's flagged verdicts by kind and outcome (the
    ``verdict_<kind>_<outcome>_count`` metrics of the outcomes not in ``OK_OUTCOMES``), zeros left
    out. Pure."""
    from livejudge.timing.verdicts import OK_OUTCOMES, OUTCOMES

    out = {}
    for kind, outs in OUTCOMES.items():
        for o in outs:
            v = metrics.get(f"verdict_{kind}_{o}_count")
            if o not in OK_OUTCOMES[kind] and isinstance(v, (int, float)) and v:
                out[f"{kind.replace('_', ' ')} {o.replace('_', ' ')}"] = v
    return out


def flagged_mix_notes(doc: dict, metrics: list[dict]) -> list[str]:
    """One line per column (after the first) whose flagged-moment count reads "same" as the
    first column's while the verdicts flagged differ in kind: "A (polite.json) and B (rude.json)
    flag as many moments but different ones: A latency s2s 5; B pause cut in 2, barge-in talked
    through 2, backchannel yielded 1" (a trial: compare showed rude's 5 flagged moments "+0" beside
    polite's, where polite's were slow replies and rude's cut-ins and talk-throughs). Pure."""
    rows = {r["metric"]: r for r in doc["rows"]}
    flagged = rows.get("verdict_flagged_moment_count")
    if flagged is None:
        return []
    def words(m):
        return ", ".join(f"{k} {_fmt(v, 'verdict_flagged_count')}" for k, v in m.items()) or "none"

    notes = []
    base = flagged_mix(metrics[0])
    for i in range(1, len(doc["columns"])):
        if flagged["verdicts"][i] != "same":
            continue
        mix = flagged_mix(metrics[i])
        if mix == base or not (mix or base):
            continue
        a, b = (f"{chr(ord('A') + j)} ({Path(doc['columns'][j]['name']).name})" for j in (0, i))
        # "same" may be a count that moved within the timing error (firm_flag_verdict): "as many" read
        # wrong at 3 vs 4 (a trial)
        how = ("flag as many moments but different ones" if flagged["values"][i] == flagged["values"][0]
               else "flag a like number of moments (the difference within the timing error) but different ones")
        notes.append(f"{a} and {b} {how} (flagged verdicts): {a[0]} {words(base)}; {b[0]} {words(mix)}")
    return notes


CALL_FILES = "_call_files"
PER_CALL = "_per_call"
"""A batch column's per-call metrics, ``{file name: metrics}`` (its summary.json's scored calls),
for ``per_call_changes``; not a setting."""


def _shown(doc: dict, i: int) -> str:
    """Column ``i``'s name as the table heads it (``column_names``)."""
    c = doc["columns"][i]
    return c.get("shown") or Path(c["name"]).name


def column_names(paths: list[str]) -> list[str]:
    """Each column's name for the table: the file name, or as many of its last path parts as make
    it unique among the columns (a trial's before/c1.json and after/c1.json were both headed
    "c1.json"). Pure."""
    parts = [Path(p).parts or (str(p),) for p in paths]
    out = []
    for i, ps in enumerate(parts):
        k = 1
        while k < len(ps) and any(j != i and tuple(q[-k:]) == tuple(ps[-k:]) for j, q in enumerate(parts)):
            k += 1
        out.append(str(Path(*ps[-k:])))
    return out


def per_call_changes(cols: list[tuple], judge_tol: dict[str, float], other_judge: list[bool]) -> list[dict]:
    """Each call of a later batch column that the first batch column also scored (paired by file
    name), with the rows whose value moved "worse" or "better" by the table's rules on that call's
    own values: a batch's medians hid a call that went from yielding to talking through ("1 → 1
    (+0)", a trial). ``[{"column": i, "file", "worse": [{metric, label, base, new}], "better":
    [...]}]``, calls with neither left out; [] unless the first column is a batch. Judge rows are
    left out where ``other_judge[i]``. The timing rows' tolerance is the pair's own: the
    narrowband one where either call counts a narrowband channel (its ``narrowband_channel_count``;
    a telephone call read "worse" here by 47 ms and "same" compared alone; a trial). Pure."""
    pairs = _paired_calls(cols)
    out = []
    for i, names in pairs.items():
        if not names:
            continue
        base, per = cols[0][3][PER_CALL], cols[i][3][PER_CALL]
        for f in names:
            moved: dict[str, list[dict]] = {"worse": [], "better": []}
            narrow = any((m.get("narrowband_channel_count") or 0) > 0 for m in (base[f], per[f]))
            timing_tol = timing_tolerance_for([{"user", "agent"} if narrow else set()])
            for m in ROWS:
                if rule_for(m).kind == "none" or (other_judge[i] and m in ("mean_p_human", "last_p_human")):
                    continue
                a, b = base[f].get(m), per[f].get(m)
                vd = verdict(m, a, b, judge_tol, timing_tol)
                if m == FLAGGED:
                    vd = firm_flag_verdict(base[f], per[f], vd)
                if vd in moved:
                    moved[vd].append({"metric": m, "label": LABELS.get(m, m), "base": a, "new": b})
            if moved["worse"] or moved["better"]:
                out.append({"column": i, "file": f, **moved})
    return out


def unpaired_columns(cols: list[tuple]) -> list[int]:
    """The later batch columns whose calls cannot be paired with the first batch's by file name
    (file names repeat in one of them, ``score 'calls/**/*.wav'``; a summary without per-call
    metrics; no file name in common): ``per_call_changes`` lists nothing for them, which says
    nothing of their calls. [] unless the first column is a batch. Pure."""
    return [i for i, names in _paired_calls(cols).items() if not names]


def _paired_calls(cols: list[tuple]) -> dict[int, list[str]]:
    """For each later batch column, the file names its calls share with the first batch column's
    (sorted; [] when they cannot be paired: ``unpaired_columns``); {} unless the first column is a
    batch. Pure."""
    if not cols or not cols[0][2].startswith("batch"):
        return {}
    base = cols[0][3].get(PER_CALL)
    out = {}
    for i, c in enumerate(cols[1:], start=1):
        if c[2].startswith("batch"):
            per = c[3].get(PER_CALL)
            out[i] = sorted(set(base) & set(per)) if isinstance(base, dict) and isinstance(per, dict) else []
    return out


def per_call_lines(doc: dict, limit: int = 8) -> list[str]:
    """The table's lines for ``doc["per_call"]``: the calls that read worse first, each with what
    moved ("B: c1.wav worse: barge-ins the agent talked through 0 → 1"), at most ``limit`` and a
    count of the rest. Pure."""
    rows = sorted(doc.get("per_call") or [], key=lambda r: (not r["worse"], r["column"], r["file"]))
    lines = []
    for r in rows[:limit]:
        letter = chr(ord("A") + r["column"])
        parts = [f"{kind}: " + "; ".join(f"{x['label']} {_fmt(x['base'], x['metric'])} → {_fmt(x['new'], x['metric'])}"
                                         for x in r[kind]) for kind in ("worse", "better") if r[kind]]
        lines.append(f"{letter}: {r['file']} " + " · ".join(parts))
    if len(rows) > limit:
        lines.append(f"… {len(rows) - limit} more calls (--json: per_call)")
    return lines
LINE_CHANNELS = "_line_channels"
"""A call column's narrowband channels (``narrowband_channels``), kept with its settings, never shown."""
"""A batch column's settings key: the file names of the calls its medians are over (``call_set_notes``;
left out of the comparison document's columns)."""


def call_set_notes(doc: dict, cols: list[tuple]) -> list[str]:
    """One line per batch column whose medians are over other calls than the first batch column's
    (by file name): its medians then mix the agent's change with the calls' own (a trial compared
    medians over 3 calls with medians over 2 of them, "+0.28, worse", with no note). Pure."""
    sets = [(i, c[3].get(CALL_FILES)) for i, c in enumerate(cols) if c[2].startswith("batch")]
    sets = [(i, set(f)) for i, f in sets if isinstance(f, list)]
    if len(sets) < 2:
        return []
    (i0, base), notes = sets[0], []
    for i, fs in sets[1:]:
        if fs == base:
            continue
        gone, new = sorted(base - fs), sorted(fs - base)

        def few(xs: list[str]) -> str:
            return ", ".join(xs[:3]) + (f", … ({len(xs)} in all)" if len(xs) > 3 else "")

        parts = ([f"{len(gone)} of {chr(ord('A') + i0)}'s {len(base)} not in it ({few(gone)})"] if gone else []) + \
                ([f"{len(new)} not in {chr(ord('A') + i0)} ({few(new)})"] if new else [])
        notes.append(f"{chr(ord('A') + i)} ({_shown(doc, i)}): its medians are over other calls "
                     f"than {chr(ord('A') + i0)}'s: " + "; ".join(parts) + ": the changes mix the agent's and the "
                     "calls' own (score the same calls to compare agents)")
    return notes


def subset_notes(doc: dict) -> list[str]:
    """One line per batch column whose shown medians were taken over fewer calls than it scored
    (a call with a silent agent measures no latency): "B (res6): medians over fewer than its 3
    calls: response latency p50 (s) 1 of 3, ..." (a trial read a batch's latency beside
    "responses measured 0" as one set of calls). Pure."""
    labels = {r["metric"]: r["label"] for r in doc["rows"]}
    notes = []
    for i, c in enumerate(doc["columns"]):
        st = c.get("settings") or {}
        mc, n = st.get("measured_calls") or {}, st.get("n_scored")
        shown = [f"{labels[m]} {k} of {n}" for m, k in mc.items() if m in labels and k]
        if shown:
            notes.append(f"{chr(ord('A') + i)} ({Path(c['name']).name}): medians over fewer than its {n} calls, "
                         "the others did not measure them: " + ", ".join(shown))
    return notes


def mixed_kind_notes(doc: dict) -> list[str]:
    """One line when single calls and batches stand side by side: a batch's figures are medians
    over its calls, which move less than one call's (a trial compared a call with a batch and
    nothing said so). Pure."""
    kinds = [c["kind"] for c in doc["columns"]]
    calls = [chr(ord("A") + i) for i, k in enumerate(kinds) if k == "call"]
    if not calls or len(calls) == len(kinds):
        return []
    batches = [chr(ord("A") + i) for i, k in enumerate(kinds) if k != "call"]
    return [f"{', '.join(calls)} {'is one call' if len(calls) == 1 else 'are single calls'} and {', '.join(batches)} "
            f"{'a batch' if len(batches) == 1 else 'batches'} (medians over its calls): a median moves less than "
            "one call, so a change between them is partly the choice of call"]


TRADEOFF_ROWS = ("verdict_pause_cut_in_count", "agent_talk_over_count", "yield_none_count",
                 "verdict_backchannel_yielded_count")
"""The rows that say how an agent got its quick answers at the caller's expense (``tradeoff_notes``)."""


def tradeoff_notes(doc: dict) -> list[str]:
    """One line per column (after the first) whose response latency p50 is "better" while its
    flagged moments are "worse", naming the rows of ``TRADEOFF_ROWS`` that got worse; and one per
    column whose yield time is "better" while it talked through more barge-ins. Pure."""
    rows = {r["metric"]: r for r in doc["rows"]}
    lat, flagged = rows.get("latency_p50_s"), rows.get("verdict_flagged_moment_count")
    if lat is None or flagged is None:
        return []
    notes = []
    for i in range(1, len(doc["columns"])):
        if lat["verdicts"][i] != "better" or flagged["verdicts"][i] != "worse":
            continue
        worse = [f"{rows[m]['label']} {_fmt(rows[m]['values'][0], m)} → {_fmt(rows[m]['values'][i], m)}"
                 for m in TRADEOFF_ROWS if m in rows and rows[m]["verdicts"][i] == "worse"]
        name = f"{chr(ord('A') + i)} ({_shown(doc, i)})"
        notes.append(f"{name} answers sooner but has more flagged moments"
                     + (f" ({'; '.join(worse)})" if worse else "")
                     + ": a quick reply that does not wait for the caller to finish is not a gain")
    # the yield time counts only the barge-ins the agent yielded to: one that talks through more of
    # them reads "better" on the few it stopped for (a new user's trial: rude 0.79 -> 0.64 "better"
    # while it talked through 3 of its 5 barge-ins)
    yld, through = rows.get("yield_mean_s"), rows.get("yield_none_count")
    for i in range(1, len(doc["columns"])):
        if yld is None or through is None or yld["verdicts"][i] != "better" or through["verdicts"][i] != "worse":
            continue
        name = f"{chr(ord('A') + i)} ({_shown(doc, i)})"
        notes.append(f"{name} yields sooner on the barge-ins it yielded to but talked through more of them "
                     f"({_fmt(through['values'][0], 'yield_none_count')} → {_fmt(through['values'][i], 'yield_none_count')}): "
                     "the yield time leaves the barge-ins it talked through out")
    return notes


def display_step(metric: str) -> float:
    """The smallest change the table shows for ``metric`` (its last printed digit)."""
    if metric in ("overlap_ratio", "talk_ratio"):
        return 0.001  # shown as a percentage with one decimal
    if metric.endswith("_count") or metric == "dropped_windows":
        return 0.5  # a count, or a batch's median of counts (0.5 → 1: a new user's trial read +0.5 as "same")
    return 0.1 if metric.startswith("dim_") else 0.01


TIMING_TOLERANCE_S: dict[str, float] = {
    "latency_p50_s": MEASURED_TIMING_ERROR.latency_p95_abs_s,
    "latency_p90_s": MEASURED_TIMING_ERROR.latency_p95_abs_s,
    "yield_mean_s": MEASURED_TIMING_ERROR.yield_p95_abs_s,
}
"""Rows whose change is judged against the measured timing error, seconds
(``timing.metrics.MEASURED_TIMING_ERROR``, HEURISTIC: one measurement's p95 |error| on
``benchmarks/vad_bounds.py``'s target set): a p90 of 1.26 → 1.23 s on the same agent was called
"better" (a new user's trial), a change the detector cannot tell from its own error."""

TIMING_TOLERANCE_NARROWBAND_S: dict[str, float] = {
    "latency_p50_s": MEASURED_TIMING_ERROR_NARROWBAND.latency_p95_abs_s,
    "latency_p90_s": MEASURED_TIMING_ERROR_NARROWBAND.latency_p95_abs_s,
    "yield_mean_s": MEASURED_TIMING_ERROR_NARROWBAND.yield_p95_abs_s,
}
"""``TIMING_TOLERANCE_S`` where a column's call came over a telephone line (its summary's
``narrowband_channel_count`` > 0): the narrowband timing error (``timing.metrics.
MEASURED_TIMING_ERROR_NARROWBAND``, HEURISTIC as above; ``benchmarks/vad_bounds.py --sets
telephone``), as the per-event verdicts use it; the wideband 47 ms had been applied to telephone
calls as well (the last note)."""


JUDGE_SPREAD_FILE = "judge_spread.json"
"""Under ``livejudge/data``: the measured between-call spread of one head's call-level scores
(``benchmarks/judge_repeatability.py --write-package``; ``judge_spread``)."""


def judge_spread() -> dict | None:
    """The stored between-call spread (``JUDGE_SPREAD_FILE``): ``{"judge": "backbone / head
    version", "tolerance": {metric: change}, "n_voices", "calls_per_voice", "source"}``, or None
    when the file is missing. ``tolerance`` is 1.96 * sqrt(2) times the pooled within-voice SD of
    mean P(human) and of each dimension's call mean over calls of one agent voice (HEURISTIC:
    a normal approximation; the voices and calls are named in the source JSON)."""
    from importlib import resources

    f = resources.files("livejudge") / "data" / JUDGE_SPREAD_FILE
    if not f.is_file():
        return None
    return json.loads(f.read_text())


def judge_tolerance(columns: list[tuple]) -> dict[str, float]:
    """``{metric: change}`` within which a judge row (mean P(human), a dimension) of these columns
    reads "same": the stored spread (``judge_spread``) when every column is one call scored by the
    head it was measured on (backbone, head and version as ``_settings`` names them, and where the
    columns name their weights, one set of them), else empty
    (a batch's median moves less than one call; another head's spread is not measured). Columns
    scored without a judge are left out: they have no judge row. Pure
    but for reading the stored file."""
    spread = judge_spread()
    # a column scored without a judge has no judge row to compare: it changes nothing in that (docs/cli.md;
    # a trial's third, judge-off column turned the other two's "same" into "worse")
    judged = [c for c in columns if c[3].get("judge") or (c[1] or {}).get("mean_p_human") is not None]
    if not spread or not judged or any(c[2] != "call" or c[3].get("judge") != spread["judge"] for c in judged):
        return {}
    if len({c[3].get(_WEIGHTS) for c in judged if c[3].get(_WEIGHTS)}) > 1:
        return {}  # one name, other weights: not one head, whose spread alone was measured
    return {k: float(v) for k, v in spread["tolerance"].items()}


def verdict(metric: str, base: float | None, new: float | None, judge_tol: dict[str, float] | None = None,
            timing_tol: dict[str, float] | None = None) -> str:
    """``rule_for(metric).verdict`` with the table's precision as tolerance: a change of the
    distance to the human reference within half a shown digit is "same", never "better" or
    "worse"; for the timing rows of ``TIMING_TOLERANCE_S`` a change within the measured timing
    error is "same" too, and for a judge row of ``judge_tol`` (``judge_tolerance``) a change within
    the measured between-call spread. The exact values decide, as the footer says: 3.151 → 3.249
    prints "3.2 → 3.2" but moved by nearly a shown digit (``_fmt_change`` then shows "+0.098"; a
    new user's trial found such a change called "same" while the footer's rule called it more).
    ``timing_tol``: the timing rows' tolerance (default ``TIMING_TOLERANCE_S``; a telephone call's
    ``TIMING_TOLERANCE_NARROWBAND_S``)."""
    timing = TIMING_TOLERANCE_S if timing_tol is None else timing_tol
    tol = max(display_step(metric) / 2, timing.get(metric, 0.0), (judge_tol or {}).get(metric, 0.0))
    return rule_for(metric).verdict(base, new, tol=tol)


def _verdict_suffix(change: str, verdict: str) -> str:
    """What follows a shown change: ", better" / ", worse"; ", same" where the change shows a
    difference the rules call none (within the timing error, inside the human band, under half a
    digit: "+0.03" alone read as unexplained, a new user's trial); nothing for a zero change or
    a row without a verdict."""
    if verdict in ("better", "worse"):
        return f", {verdict}"
    if verdict == "same" and any(c in "123456789" for c in change):
        return ", same"
    return ""


def _fmt(v: float | None, metric: str) -> str:
    if v is None:
        return "–"
    if metric in ("overlap_ratio", "talk_ratio"):
        return f"{v * 100:.1f} %"
    if metric.endswith("_count") or metric == "dropped_windows":
        return f"{v:g}"
    return f"{v:.2f}" if not metric.startswith("dim_") else f"{v:.1f}"


def _fmt_change(base: float | None, new: float | None, metric: str) -> str:
    """The change as the table shows it: the difference of the two values as printed (rounded to
    the shown digit first), so "0.00 → 0.01" reads "+0.01". Where that would mislead, the exact
    change to two significant digits instead: a change under half a shown digit ("0.00 → 0.01
    (+0.002, same)", "3.1 → 3.2 (+0.026, same)", "3.1 → 3.1 (-0.04, same)"), and values that print
    the same although they moved by more ("3.2 → 3.2 (+0.098, better)"); new users' trials. No
    change at all reads "+0.00". The document's ``changes`` stay exact."""
    if base is None or new is None:
        return ""
    if metric.endswith("_count") or metric == "dropped_windows":
        return f"{new - base:+g}"
    pct = metric in ("overlap_ratio", "talk_ratio")
    scale, nd = (100.0, 1) if pct else (1.0, 1 if metric.startswith("dim_") else 2)
    shown = round(new * scale, nd) - round(base * scale, nd)
    exact = (new - base) * scale
    if exact != 0 and abs(exact) < 0.5 * 10 ** -nd:
        # under half a digit (3.149 → 3.175 printed "+0.1, same" beside the footer's half-a-digit
        # rule): the exact change to two significant digits, never a bare "+0.00" or "-0.00"
        return f"{exact:+.2g}" + (" pt" if pct else "")
    if round(shown, nd) == 0 and exact != 0:
        # values that print the same although they moved by half a digit or more (3.151 → 3.249
        # printed "+0.0"): three significant digits, so -0.0998 never reads as a whole "-0.1"
        return f"{exact:+.3g}" + (" pt" if pct else "")
    return f"{shown:+.{nd}f}" + (" pt" if pct else "")


def print_table(doc: dict, console=None) -> None:
    """Rich table on the terminal (stdout)."""
    from rich.console import Console
    from rich.markup import escape as rich_escape
    from rich.table import Table

    from livejudge.outputs.guard import clean

    console = console or Console()
    cols = doc["columns"]
    t = Table(title="livejudge compare (change and verdict against the first column)", show_lines=False)
    t.add_column("metric")
    for i, c in enumerate(cols):
        name = rich_escape(clean(c.get("shown") or Path(c["name"]).name))  # not markup, nor terminal control
        t.add_column(f"{'A' if i == 0 else chr(ord('A') + i)}: {name}\n({c['kind']})", justify="right")
    t.add_column("better", style="dim", no_wrap=True)
    shown, unmeasured = split_unmeasured(doc["rows"])
    for r in shown:
        cells = [r["label"]]
        for i, v in enumerate(r["values"]):
            text = _fmt(v, r["metric"])
            if i > 0:
                ch = _fmt_change(r["values"][0], v, r["metric"])
                vd = r["verdicts"][i]
                style = {"better": "green", "worse": "red"}.get(vd, "dim")
                if ch:
                    text += f" [{style}]({ch}{_verdict_suffix(ch, vd)})[/]"
            cells.append(text)
        cells.append(r["rule_short"] + same_within(doc, r["metric"]))
        t.add_row(*cells)
    console.print(t)
    for i in doc.get("unpaired") or []:
        console.print(f"note: {chr(ord('A') + i)}'s calls cannot be paired with A's by file name (a name repeats in "
                      "one batch, a summary lists no per-call figures, or no name is in both): no call of it is "
                      "checked on its own", style="yellow", highlight=False)
    moved = per_call_lines(doc)
    if moved:
        console.print("calls that moved (paired by file name with A's; the same rules on each call's own values):",
                      highlight=False)
        for line in moved:
            console.print("  " + rich_escape(clean(line)), style="red" if " worse: " in line else "green",
                          highlight=False)
    if unmeasured:
        console.print("not measured by the head (no value in any column): " + ", ".join(unmeasured), style="dim",
                      highlight=False)
    if doc.get("settings_differ"):
        console.print("note: these calls were measured with different settings: " + settings_differ_text(doc)
                      + "; part of each change comes from the settings, not the agent", style="yellow",
                      highlight=False)
    for note in doc.get("notes") or []:
        console.print("note: " + rich_escape(clean(note)), style="yellow", highlight=False)
    console.print(f"better/worse rules ({HEURISTIC_TAG}): " + rules_text(doc["rows"])
                  + "; dimensions: mean score over ungated windows; " + same_text(doc), style="dim", highlight=False)


def _same_text(timing: dict[str, float]) -> str:
    return (f"changes within the shown precision (half the last digit), or within the measured timing error "
            f"(latency {timing['latency_p50_s'] * 1000:.0f} ms, yield "
            f"{timing['yield_mean_s'] * 1000:.0f} ms: p95 |error|, benchmarks/vad_bounds.py"
            + (" --sets telephone where a channel is narrowband"
               if any(timing[m] == TIMING_TOLERANCE_NARROWBAND_S[m] != TIMING_TOLERANCE_S[m] for m in timing)
               else "")
            + "), are the same.")


SAME_TEXT = _same_text(TIMING_TOLERANCE_S)
"""The tables' footer on "same" (terminal, markdown and HTML say it alike); ``same_text`` adds the
judge rows' spread where it applies."""


def same_text(doc: dict) -> str:
    """``SAME_TEXT``, and where the document carries a ``judge_tolerance``: the judge rows' measured
    between-call spread, e.g. "...; mean P(human) within 0.17 and dimension scores within
    0.01–0.38 (by dimension) of each other are within the spread of two calls of one agent voice (95 %,
    benchmarks/judge_repeatability.py on 15 voices), the same." Pure."""
    tol = doc.get("judge_tolerance") or {}
    timing = doc.get("timing_tolerance_s")
    base = _same_text(timing) if isinstance(timing, dict) and {"latency_p50_s", "yield_mean_s"} <= set(timing) \
        else SAME_TEXT
    if not tol:
        spread = judge_spread()
        judged = any(v is not None for r in doc.get("rows") or [] if r["metric"] == "mean_p_human" for v in r["values"])
        if spread and judged:  # say outright that the judge rows kept the digit rule here (a new user's trial)
            return (base[:-1] + f"; the judge rows keep the shown-precision rule here: their between-call spread "
                    f"is measured only between single calls of {spread['judge'].split(' / ')[-1]}.")
        return base
    parts = []
    if "mean_p_human" in tol:
        parts.append(f"mean P(human) within {tol['mean_p_human']:.3f}")
    dims = sorted(v for k, v in tol.items() if k.startswith("dim_"))
    if dims:  # three decimals: "within 0.21" beside a +0.21 change read "better" (the tolerance is 0.208)
        parts.append(f"dimension scores within {dims[0]:.3f}–{dims[-1]:.3f} (by dimension shown; each row's in its "
                     "better column as ±X same)"
                     if f"{dims[0]:.3f}" != f"{dims[-1]:.3f}" else f"dimension scores within {dims[0]:.3f}")
    spread = judge_spread() or {}
    return (base[:-1] + "; " + " and ".join(parts) + " of each other are within the spread of two calls of one "
            f"agent voice (95 %, benchmarks/judge_repeatability.py on {spread.get('n_voices', '?')} voices), the same.")

NOT_MEASURED_SUFFIX = " (not measured by the head)"


def split_unmeasured(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """(rows to show, names of the dimension rows no column's head measures and no column has a
    value for): the tables list the latter on one line instead of ten rows of "–  –  higher" (a new
    user's trial). The JSON keeps every row. Pure."""
    from livejudge.judge.model.dimensions import DIMENSIONS

    name = {f"dim_{d.id}": d.name for d in DIMENSIONS}  # by the row's metric, not parsed back from its label
    shown, names = [], []
    for r in rows:
        if r["label"].endswith(NOT_MEASURED_SUFFIX) and all(v is None for v in r["values"]):
            names.append(name.get(r["metric"], r["metric"]))
        else:
            shown.append(r)
    return shown, names


HEURISTIC_TAG = "HEURISTIC"
"""How compare labels its better/worse rules and "same" tolerances (docs/cli.md calls them
HEURISTIC; a trial found the table, page and JSON never did)."""


def rules_text(rows: list[dict]) -> str:
    """The table's better/worse rules in one line, each rule kind once: "lower is better: agent yield
    time (s), barge-ins talked through, ..." (the footer repeated "lower: lower is better (...)" five
    times; a new user's trial). Rows without a verdict are left out. Pure."""
    kinds: dict[str, list[str]] = {}
    for r in rows:
        rule = rule_for(r["metric"])
        if rule.kind in ("lower", "higher"):
            label = "dimensions (1 machine-like … 5 human-like)" if r["metric"].startswith("dim_") else r["label"]
            kinds.setdefault(f"{rule.kind} is better", [])
            if label not in kinds[f"{rule.kind} is better"]:
                kinds[f"{rule.kind} is better"].append(label)
        elif rule.kind == "band":
            kinds.setdefault(rule.text, [])
            kinds[rule.text].append(r["label"])
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in kinds.items())


def same_within(doc: dict, metric: str) -> str:
    """", ±0.199 same" for a judge row whose change reads "same" within the measured between-call
    spread (``judge_tolerance``), else "": shown beside the row's rule in the table and the HTML
    page (it was only in --json, so "+0.1, better" beside "+0.1, same" read as a contradiction; a
    trial). Pure."""
    tol = (doc.get("judge_tolerance") or {}).get(metric)
    return f", ±{tol:.3f} same" if tol else ""  # three decimals: a +0.20 change beside "±0.20" read "better" at 0.199


CSV_FIELDS = ("metric", "label", "column", "input", "kind", "value", "change", "verdict", "rule")
"""``compare --csv``'s header: one row per metric and column (a tidy table for a spreadsheet or a
dashboard). ``column`` counts from 0, the first input (the baseline); ``input`` is that input as given;
``change`` is against the baseline."""


def comparison_csv(doc: dict) -> str:
    """The comparison's rows as CSV text (``CSV_FIELDS``): one row per metric and column, in the
    table's order, with its value, its change against the first column, its verdict ("better",
    "worse", "same", or empty where the row has no rule or the column cannot be compared) and the
    row's rule. Empty cells where a value was not measured. Pure."""
    import csv
    import io

    cols = doc.get("columns") or []
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(CSV_FIELDS)
    for row in doc.get("rows") or []:
        values, changes, verdicts = (row.get(k) or [] for k in ("values", "changes", "verdicts"))
        for i, c in enumerate(cols):
            cell = (lambda xs: "" if i >= len(xs) or xs[i] is None else xs[i])
            w.writerow([row.get("metric", ""), row.get("label", ""), i, c.get("name") or c.get("shown", ""),
                        c.get("kind", ""), cell(values), "" if i == 0 else cell(changes),
                        "" if i == 0 else cell(verdicts), row.get("rule", "")])
    return f.getvalue()


def render_html(doc: dict) -> str:
    """The comparison as one self-contained HTML page (no script, no network)."""
    e = html.escape
    cols = doc["columns"]
    head = "".join(f"<th>{e(c.get('shown') or Path(c['name']).name)}<br><small>{e(c['kind'])}</small></th>" for c in cols)
    body = []
    shown, unmeasured = split_unmeasured(doc["rows"])
    same = same_text(doc)
    for r in shown:
        cells = []
        for i, v in enumerate(r["values"]):
            vd = r["verdicts"][i] if i else ""
            ch = _fmt_change(r["values"][0], v, r["metric"]) if i else ""
            extra = f" <small class='{e(vd)}'>({e(ch)}{e(_verdict_suffix(ch, vd))})</small>" if ch else ""
            cells.append(f"<td class='num'>{e(_fmt(v, r['metric']))}{extra}</td>")
        body.append(f"<tr><td>{e(r['label'])}</td>{''.join(cells)}<td class='rule'>{e(r['rule'] + same_within(doc, r['metric']))}</td></tr>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>livejudge compare</title><style>"
            "body{font-family:system-ui,sans-serif;margin:1em auto;max-width:1100px;color:#222}"
            "table{border-collapse:collapse;font-size:.9em}td,th{padding:.2em .6em;border-bottom:1px solid #eee;"
            "text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}.better{color:#2ca02c}"
            ".worse{color:#d62728}.rule{color:#666;font-size:.85em}</style></head><body>"
            "<h1>livejudge compare</h1><p>Change and verdict against the first column; the rule per metric "
            f"says what counts as better ({HEURISTIC_TAG}: the rules and the tolerances of \"same\" are set by "
            "livejudge, docs/cli.md).</p>"
            + (f"<p class='worse'>Note: these calls were measured with different settings: "
               f"{e(settings_differ_text(doc))}; part of each change comes from the settings, "
               "not the agent.</p>" if doc.get("settings_differ") else "")
            + "".join(f"<p class='worse'>Note: {e(n)}.</p>" for n in doc.get("notes") or [])
            + f"<table><tr><th>metric</th>{head}<th>rule</th></tr>{''.join(body)}</table>"
            + ("<h2>Calls that moved</h2><p class='rule'>Paired by file name with the first column's; the same "
               "rules on each call's own values.</p><ul>"
               + "".join(f"<li class='{'worse' if ' worse: ' in line else 'better'}'>{e(line)}</li>"
                         for line in per_call_lines(doc, limit=200)) + "</ul>" if doc.get("per_call") else "")
            + (f"<p class='rule'>Not measured by the head (no value in any column): {e(', '.join(unmeasured))}.</p>"
               if unmeasured else "") + f"<p class='rule'>{e(same[0].upper() + same[1:])}</p></body></html>")


def parse_worse(texts: list[str]) -> tuple[list[str], set[str]]:
    """``--fail-if-worse`` names: (the metrics to gate, of the table's rows with a better/worse rule,
    "any" standing for every such row but the dimensions; the metrics named explicitly). Raises
    ValueError naming the metric and the ones allowed."""
    from livejudge.judge.model.dimensions import DIMENSIONS

    allowed = [m for m in ROWS if rule_for(m).kind != "none"] + [f"dim_{d.id}" for d in DIMENSIONS]
    out, named = [], set()
    for t in texts:
        for name in (x.strip() for x in t.split(",")):
            if name == "any":
                out.extend(m for m in allowed if not m.startswith("dim_"))
            elif name in allowed:
                out.append(name)
                named.add(name)
            else:
                why = "has no better/worse rule" if name in ROWS else "is not a row of compare"
                raise ValueError(f"--fail-if-worse {name!r} {why}: give one of "
                                 f"{', '.join(m for m in allowed if not m.startswith('dim_'))}, "
                                 "dim_<id>, or 'any' (every row with a rule but the dimensions)")
    return list(dict.fromkeys(out)), named


def worse_gates(doc: dict, metrics: list[str], each: bool = False, explicit: set[str] | None = None) -> list[dict]:
    """``--fail-if-worse``: per metric, failed when a later column reads "worse" than the first by
    the table's rule (for batches, on their medians), or with ``each`` when a call paired by file
    name does (``doc["per_call"]``): "fail if the agent got worse than the baseline" as a CI gate,
    which fixed thresholds cannot say (a trial). A later column the rule cannot compare (no value,
    another judge, a call cut short) fails the gate too, as an unmeasured metric fails ``--fail-if``;
    so do batches whose calls cannot be paired, with ``each``. ``explicit``: the metrics named
    (default: all of ``metrics``); a row no column measured fails only those. ``[{"gate", "metric",
    "failed", "reason"}]``. Pure."""
    explicit = set(metrics) if explicit is None else explicit
    cols = doc["columns"]
    rows = {r["metric"]: r for r in doc["rows"]}
    out = []
    unpaired = [chr(ord("A") + i) for i in doc.get("unpaired") or []] if each else []
    for m in metrics:
        r = rows.get(m)
        label = LABELS.get(m, m) if r is None else r["label"]
        if m not in explicit and all(v is None for v in (r["values"] if r is not None else [None])):
            continue  # 'any' leaves out a row no column measured (it was listed as passed; a trial)
        bad = []
        for i in range(1, len(cols)):
            name = f"{chr(ord('A') + i)} ({_shown(doc, i)})"
            if r is not None and r["verdicts"][i] == "worse":
                bad.append(f"{name} worse than A, {_fmt(r['values'][0], m)} → {_fmt(r['values'][i], m)}")
            elif r is None or r["verdicts"][i] == "":
                # no verdict (a column without the value, scored without a judge or by another, or
                # cut short): the gate cannot say "not worse", so it fails as an unmeasured one does
                # (a re-check: a P(human) gate passed against a column whose judge had not loaded);
                # 'any' leaves out a row no column measured
                vals = r["values"] if r is not None else [None] * len(cols)
                if m not in explicit and all(v is None for v in vals):
                    continue
                cut = {0, i} & set(doc.get("cut_short_columns") or ())
                why = ("no value in A" if vals[0] is None else f"no value in {chr(ord('A') + i)}" if vals[i] is None
                       # which column is cut (a re-check: "B (whole.json) … a call cut short" where A was)
                       else f"{'A' if 0 in cut else chr(ord('A') + i)} is a call cut short" if cut
                       else "another judge" if m in ("mean_p_human", "last_p_human") or m.startswith("dim_")
                       else "no verdict")
                bad.append(f"{name} cannot be compared ({_fmt(vals[0], m)} → {_fmt(vals[i], m)}: {why})")
        if each:
            bad += [f"{x['file']} in {chr(ord('A') + x['column'])} worse than in A, {_fmt(w['base'], m)} → "
                    f"{_fmt(w['new'], m)}" for x in doc.get("per_call") or [] for w in x["worse"] if w["metric"] == m]
            # batches whose calls could not be paired: --gate-each cannot check them (a re-check passed
            # "no paired call read worse" where no call was paired)
            bad += [f"{c}'s calls could not be paired with A's by file name" for c in unpaired]
        gate = f"worse {m}"
        if bad:
            shown = "; ".join(bad[:4]) + (f"; … {len(bad) - 4} more" if len(bad) > 4 else "")
            out.append({"gate": gate, "metric": m, "failed": True, "reason": f"{label}: {shown}"})
        else:
            where = "column" + (" and no paired call" if each else "")
            out.append({"gate": gate, "metric": m, "failed": False, "reason": f"{label}: worse in no {where}"})
    return out


def register(sub) -> None:
    from livejudge.commands.runner import HelpFormatter

    p = sub.add_parser("compare", help="side-by-side metrics of two or more calls or batches",
                       formatter_class=HelpFormatter,
                       description="Compare calls (result JSON from score --json) or batches (a --out-dir "
                                   "directory or its summary.json: medians over calls), against the first. "
                                   "Each change gets a verdict by a stated rule per metric (better, worse, or "
                                   "same within the shown digit, the measured timing error or, between single "
                                   "calls of the default head, the measured between-call spread of P(human) and "
                                   "the dimensions); the table's footer states the rules. docs/cli.md, "
                                   "'After the call'. Example: livejudge compare before.json after.json",
                       epilog="exit codes: 0 the comparison was written · 1 an output file could not be written · "
                              "2 bad input or usage (one line says what: fewer than two inputs, an input that is "
                              "not a result or batch summary, an output path that is an input) · 3 a "
                              "--fail-if-worse gate failed (the outputs are written first)")
    p.add_argument("inputs", nargs="+", metavar="RESULT", help="result documents, batch directories or summary.json")
    p.add_argument("--html", default=None, metavar="OUT.html", help="also write the table as an HTML page")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                   help="write the comparison as JSON ('-' = stdout, and no table)")
    p.add_argument("--csv", dest="csv_out", default=None, metavar="OUT.csv",
                   help="also write the rows as CSV: one row per metric and column (metric, label, column, "
                        "input, kind, value, change, verdict, rule)")
    p.add_argument("--fail-if-worse", action="append", default=[], metavar="METRIC",
                   help="exit 3 when a later column reads 'worse' than the first on METRIC by the table's rule "
                        "(a batch: on its medians), e.g. latency_p90_s or yield_none_count; repeatable or "
                        "comma-separated; 'any': every row with a rule but the dimensions")
    p.add_argument("--gate-each", action="store_true",
                   help="with --fail-if-worse on batches: also fail when one call, paired by file name with "
                        "the first batch's, reads worse (its medians may hide it)")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from livejudge.errors import CLIError

    if len(args.inputs) < 2:
        raise CLIError("compare needs at least two inputs (e.g. before.json after.json)")
    from livejudge.outputs.guard import check_output_paths

    try:
        worse, named = parse_worse(getattr(args, "fail_if_worse", None) or [])
        if getattr(args, "gate_each", False) and not worse:
            raise ValueError("--gate-each gates --fail-if-worse on each paired call: give --fail-if-worse METRIC too")
        check_output_paths({"--json": args.json_out, "--html": args.html, "--csv": getattr(args, "csv_out", None)},
                           # a batch folder: its summary.json, and the folder itself (guard.input_folders)
                           [x for i in args.inputs for x in ((str(Path(i) / "summary.json"), i) if Path(i).is_dir()
                                                             else (i,))],
                           what="result document", examples={"--json": "compare.json"})
        doc = compare(args.inputs)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if worse:
        doc["gates"] = worse_gates(doc, worse, each=getattr(args, "gate_each", False), explicit=named)
        if getattr(args, "gate_each", False) and not any(c["kind"].startswith("batch") for c in doc["columns"][:1]):
            print("livejudge: note: --gate-each pairs the calls of batches; the first input is a single call, so "
                  "only the columns are gated", file=sys.stderr)
    resolved = [Path(i).resolve() for i in args.inputs]
    twice = sorted({str(i) for i, r in zip(args.inputs, resolved) if resolved.count(r) > 1})
    if twice:  # every change reads "same" against itself (a trial compared x.json with x.json unwarned)
        print(f"livejudge: warning: {', '.join(twice)} given more than once: its columns compare a result with "
              "itself", file=sys.stderr)
    # the files first: a reader that closes stdout early (`| head -3`) must not cost them (a trial:
    # exit 1, no word, neither file written); each "written" line follows the table, as before
    written, failed = [], None
    for path, text, what in ((args.json_out if args.json_out != "-" else None, lambda: json.dumps(doc, indent=2), "comparison"),
                             (args.html, lambda: render_html(doc), "HTML table"),
                             (getattr(args, "csv_out", None), lambda: comparison_csv(doc), "CSV rows")):
        if not path:
            continue
        try:
            Path(path).write_text(text(), encoding="utf-8")
        except OSError as exc:
            failed = CLIError(f"cannot write {path}: {exc.strerror or exc}", code=1)
            break
        written.append(f"livejudge: {what} written to {path}")
    from livejudge.outputs.guard import is_closed_pipe, stdout_closed, stdout_console

    try:
        if args.json_out == "-":
            json.dump(doc, sys.stdout, indent=2)
            print(flush=True)
        else:
            print_table(doc, console=stdout_console())  # a closed stdout ends the table quietly
    except (OSError, ValueError) as exc:
        if not is_closed_pipe(exc):
            raise
        stdout_closed()  # its reader has what it wanted: nothing more to say there
    for line in written:
        print(line, file=sys.stderr)
    if failed is not None:
        raise failed
    gates = doc.get("gates") or []
    for g in gates:
        if g["failed"]:
            print(f"livejudge: FAIL {g['gate']}: {g['reason']}", file=sys.stderr)
    if any(g["failed"] for g in gates):
        from livejudge.errors import EXIT_GATE

        print(f"livejudge: {sum(g['failed'] for g in gates)} of {len(gates)} --fail-if-worse gate(s) failed "
              f"({HEURISTIC_TAG} rules: the table's footer)", file=sys.stderr)
        return EXIT_GATE
    if gates:
        print(f"livejudge: {len(gates)} of {len(gates)} --fail-if-worse gate(s) passed: no column"
              + (" or paired call" if getattr(args, "gate_each", False) else "") + " read worse on "
              + ", ".join(g["metric"] for g in gates), file=sys.stderr)
    return 0

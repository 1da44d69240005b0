"""The result document: one JSON shape for `score`, `replay`, `attach` and the Pipecat observer.

Keys (all times in seconds on the session clock unless the name says otherwise):

* ``livejudge_version``, ``created_utc`` (wall clock, export only)
* ``duration_s``, ``sample_rate_in``, ``channels`` (which input is user / agent)
* ``segments``: ``[{channel, onset_s, offset_s}]`` — VAD speech, both channels
* ``turns``: ``[{channel, onset_s, offset_s, n_segments}]``
* ``transitions``: ``[{from, to, from_offset_s, to_onset_s, gap_s}]`` (gap_s < 0 = overlap)
* ``barge_ins``: ``[{by, onset_s, yield_s}]`` (yield_s null when the other kept talking)
* ``backchannels``: ``[{channel, onset_s, offset_s}]``
* ``overlaps``: ``[{onset_s, offset_s}]``
* ``verdicts``: ``[{kind, outcome, ok, t_s, value_s, settle_s, threshold_s, basis, text}]``, one per
  judged moment (``livejudge.timing.verdicts``), with ``verdict_config`` (their thresholds)
* ``transcripts``: ``[{channel, onset_s, offset_s, text, n_words}]`` (agent turns; only with ASR)
* ``judge``: ``[{t_s, window_start_s, window_end_s, p_human, compute_ms, dimensions: {id:
  {score, evidence, evidence_unit, gated, z, contribution}}}]``, score null when gated (too
  little evidence, or a dimension the head does not measure: its ``reason`` says which); p_human is null and
  ``no_evidence`` true (false otherwise, always present) when the window has no evidence (every dimension gated, or the ungated
  ones carry too little of the classifier's weight), e.g. before the agent has spoken
* ``summary``: verdict counts and flagged rates (``verdict_<kind>_<outcome>_count``,
  ``verdict_<kind>_flagged_rate``, ``verdict_flagged_count``: flagged verdicts...), moment counts
  (``verdict_moment_count``, ``verdict_flagged_moment_count``: a reply after dead air, or an agent start over the caller (latency and talk-over), is one moment
  of two verdicts, ``livejudge.timing.verdicts.moments``), latency count/mean/p50/p90,
  barge-ins (``barge_in_count`` = length of
  ``barge_ins``, both sides: ``user_barge_in_count`` + the agent's starts inside a user turn),
  the agent's starts while the caller's speech sounds as the verdicts judge them
  (``agent_talk_over_count``: talk-overs; ``agent_early_start_count``: early starts, the caller
  ending within ``verdict_config.talk_over_grace_s`` seconds), yield (after the
  user's barge-ins), overlap ratio, backchannels (``backchannel_count``, both sides;
  ``user_backchannel_count``, ``agent_backchannel_count``), talk ratio, ``mean_p_human`` (over EVERY window
  with evidence: nothing else is left out), ``evidence_coverage`` (share of judged windows with
  evidence), dropped_windows, ``judge_unavailable_windows`` (windows a judge service could not
  judge: it was gone, slow or failing; 0 for an in-process judge; also in ``judge_info``)
* ``judge_info``: backbone, head name/version, provenance ("prior" or "trained"), ``validated``:
  one line saying what P(human) was validated against (from the head's config)
* ``framework_events``: what a framework/protocol reported, for comparison only
* ``errors``: one-line messages of anything that went wrong (the document is still valid)
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from livejudge import __version__
from livejudge.timing.metrics import RESPONSE_LATENCY_HUMAN
from livejudge.timing.verdicts import summarize_verdicts


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def build_result(session: Any) -> dict:
    """Assemble the result document from a session's current state (see module docstring).

    ``session`` is a ``livejudge.session.Session`` (it calls this under its lock); it is not
    imported here, even for typing, because the session imports this module (issue 21: no
    import circles). Read: ``timeline``, ``summary``, ``judge_results``, ``judge``, ``now_s``,
    ``info``, ``config``, ``transcripts``, ``dropped_windows``, ``notes``, ``errors``.
    """
    tl = session.timeline
    bc_window_s = session.config.verdicts.backchannel_yield_window_s
    sm = session.summary
    vs = session.verdicts
    results = session.judge_results
    judge_info = session.judge.info() if session.judge is not None and hasattr(session.judge, "info") else None
    # no-evidence windows say nothing (p_human None); every other window counts
    p = [r.p_human for r in results if r.p_human is not None]
    doc = {
        "livejudge_version": __version__,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": _r(session.now_s, 3),
        "sample_rate_in": session.info.get("sample_rate_in"),
        "channels": session.info.get("channels", {"user": "user", "agent": "agent"}),
        "source": {k: v for k, v in session.info.items() if k not in ("sample_rate_in", "channels")},
        "config": {
            "window_s": session.config.window_s,
            "interval_s": session.config.interval_s,
            "vad": {
                "aggressiveness": session.config.vad.aggressiveness,
                "frame_ms": session.config.vad.frame_ms,
                "hangover_s": session.config.vad.hangover_s,
                "adaptive": session.config.vad.adaptive,
                "highpass_hz": session.config.vad.highpass_hz,
            },
            "merge_pause_s": session.config.turns.merge_pause_s,
            "backchannel_max_s": session.config.turns.backchannel_max_s,
            "utterance_pause_s": session.config.turns.utterance_pause_s,
            "phrase_break_s": session.config.turns.phrase_break_s,
        },
        "segments": [{"channel": s.channel, "onset_s": _r(s.onset_s), "offset_s": _r(s.offset_s)} for s in tl.segments],
        "turns": [{"channel": t.channel, "onset_s": _r(t.onset_s), "offset_s": _r(t.offset_s),
                   "n_segments": t.n_segments} for t in tl.turns],
        "transitions": [{"from": t.from_channel, "to": t.to_channel, "from_offset_s": _r(t.from_offset_s),
                         "to_onset_s": _r(t.to_onset_s), "gap_s": _r(t.gap_s)} for t in tl.transitions],
        # cut_by_end: the call ended in it before it was decided; where speech stopped with the call
        # is no yield, so yield_s is None (``Timeline.marked_by_end``, the rule the events follow too;
        # a trial read 1.28 s there unmarked)
        "barge_ins": [{"by": b.by, "onset_s": _r(b.onset_s), "yield_s": _r(b.yield_s),
                       **({"cut_by_end": True} if b.cut_by_end else {})}
                      for b in (tl.marked_by_end(b, bc_window_s) for b in tl.barge_ins)],
        "backchannels": [{"channel": b.channel, "onset_s": _r(b.onset_s), "offset_s": _r(b.offset_s),
                          **({"cut_by_end": True} if b.cut_by_end else {})}
                         for b in (tl.marked_by_end(b, bc_window_s) for b in tl.backchannels)],
        "overlaps": [{"onset_s": _r(o.onset_s), "offset_s": _r(o.offset_s)} for o in tl.overlaps],
        "verdicts": [v.to_dict() for v in vs],
        "verdict_config": session.config.verdicts.to_dict(),
        "transcripts": [{"channel": t.channel, "onset_s": _r(t.onset_s), "offset_s": _r(t.offset_s),
                         "text": t.text, "n_words": t.n_words} for t in session.transcripts],
        "judge": [r.to_dict() for r in results],
        "summary": {
            "latency_count": sm.latency_count,
            "latency_mean_s": _r(sm.latency_mean_s),
            "latency_p50_s": _r(sm.latency_p50_s),
            "latency_p90_s": _r(sm.latency_p90_s),
            "latency_human_reference": {"low_s": RESPONSE_LATENCY_HUMAN.low_s,
                                        "high_s": RESPONSE_LATENCY_HUMAN.high_s,
                                        "source": RESPONSE_LATENCY_HUMAN.source},
            "gap_count": sm.gap_count,
            "gap_mean_s": _r(sm.gap_mean_s),
            # barge_in_count counts the barge_ins list (both sides) = user_barge_in_count
            # (user starts inside an agent turn) + the agent's starts inside a user turn; those the
            # verdicts judge (agent starts while the caller's speech sounds) split into talk-overs
            # and early starts exactly as the talk_over verdicts do
            "barge_in_count": len(tl.barge_ins),
            "user_barge_in_count": sm.barge_in_count,
            "agent_talk_over_count": sm.agent_talk_over_count,
            "agent_early_start_count": sm.agent_early_start_count,
            "yield_mean_s": _r(sm.yield_mean_s),
            "yield_none_count": sm.yield_none_count,
            # barge-ins the call's end cut before they were decided: no verdict, in no yield stat
            "barge_in_cut_by_end_count": sm.barge_in_cut_by_end_count,
            "overlap_ratio": _r(sm.overlap_ratio),
            "overlap_s": _r(sm.overlap_s, 3),
            "backchannel_count": sm.backchannel_count,
            "user_backchannel_count": sm.user_backchannel_count,
            "agent_backchannel_count": sm.agent_backchannel_count,
            "talk_ratio": _r(sm.talk_ratio),
            "user_talk_s": _r(sm.user_talk_s, 3),
            "agent_talk_s": _r(sm.agent_talk_s, 3),
            "mean_p_human": _r(sum(p) / len(p)) if p else None,
            "last_p_human": _r(p[-1]) if p else None,
            "judged_windows": len(results),
            "no_evidence_windows": sum(1 for r in results if not r.has_evidence),
            "evidence_coverage": _r(len(p) / len(results), 3) if results else None,
            "dropped_windows": session.dropped_windows,
            # windows a judge service (--judge-url) could not judge: gone, slow or failing (0 in-process)
            "judge_unavailable_windows": int((judge_info or {}).get("judge_unavailable_windows") or 0),
            # a gate can fail a call whose channels look wrong (a swap reads the caller as the agent)
            "input_health_warning_count": len(session.info.get("input_health") or []),
            # seconds of the user channel the echo gate attenuated before timing (None: the gate was
            # off or not run; a trial found it applied with nothing saying so outside the JSON)
            "echo_gated_s": _echo_gated_s(session.info.get("echo_gate")),
            # channels whose speech has no energy above the telephone band (source.line; None where the
            # line was not checked: live calls), a gate metric though not an input-health warning
            "narrowband_channel_count": _narrowband_count(session.info),
            **summarize_verdicts(vs),
        },
        "judge_info": judge_info,
        "framework_events": [{"kind": n.kind, "t_s": _r(n.t_s), **n.data} for n in session.notes],
        "errors": list(session.errors),
    }
    return doc


def _echo_gated_s(gate: object) -> float | None:
    """Seconds of the user channel the echo gate attenuated (``source.echo_gate``): its
    ``gated_s`` when applied, 0.0 when it looked and found no leakage, None when off or absent."""
    if not isinstance(gate, dict) or gate.get("mode") in (None, "off"):
        return None
    if gate.get("applied"):
        v = gate.get("gated_s")
        return float(v) if isinstance(v, (int, float)) else None
    return 0.0


RECORDED_KINDS = ("score", "replay", "check")
"""``source.kind`` of a recorded call: its line is checked before streaming (``health.check_recording``)."""


def _narrowband_count(info: dict) -> int | None:
    """How many channels ``source.line`` calls narrowband: 0 for a recording or a live call found
    wideband, None where the line was not checked (a live call that held under 1 s of both channels)."""
    line = info.get("line")
    if isinstance(line, dict):
        return len(line.get("channels") or [])
    return 0 if info.get("kind") in RECORDED_KINDS or info.get("line_checked") else None


def dimension_view(doc: dict) -> dict | None:
    """The judge's dimension view of a result document (``judge_info.dimensions``, written by the
    judge's ``dimension_view``), checked: ``{"groups": [tuple of dimension ids sharing one learned
    score, ...], "not_measured": {dimension id: why the head does not measure it}}``, or None when
    the result has none (an older result, or a judge without one). Pure. The one reader of that
    field for ``livejudge compare`` and the HTML report."""
    ji = doc.get("judge_info")
    view = ji.get("dimensions") if isinstance(ji, dict) else None
    if not isinstance(view, dict):
        return None
    groups = [tuple(g) for g in view.get("groups") or [] if isinstance(g, list) and all(isinstance(x, str) for x in g)]
    nm = view.get("not_measured")
    return {"groups": groups,
            "not_measured": {k: str(v) for k, v in nm.items() if isinstance(k, str)} if isinstance(nm, dict) else {}}


def dimension_means(doc: dict) -> dict[str, float | None]:
    """``{"dim_<id>": mean 1–5 score over the call's ungated judged windows, or None}`` of a result
    document (``build_result``): what ``livejudge compare`` and the gates read per dimension, and
    the report's "call mean" column. Pure; a window without the dimension or with it gated (too
    little evidence) does not count."""
    from livejudge.judge.model.dimensions import DIMENSIONS

    out: dict[str, float | None] = {}
    for d in DIMENSIONS:
        vals = [float(w["dimensions"][d.id]["score"]) for w in doc.get("judge") or []
                if d.id in (w.get("dimensions") or {}) and not w["dimensions"][d.id].get("gated")]
        out[f"dim_{d.id}"] = round(sum(vals) / len(vals), 4) if vals else None
    return out


def write_json(doc: dict, path: str | Path) -> Path:
    """Write the document atomically (a uniquely named temp file + rename), so a crash never
    leaves half a file and two writers of one path never collide; strict JSON (a NaN/inf is
    written as null and noted in ``errors``: ``livejudge.outputs.guard.json_text``).
    Raises OSError."""
    from livejudge.outputs.guard import json_text, write_text_atomic

    return write_text_atomic(path, json_text(doc))


MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""Largest result/summary file ``load_json_document`` reads, bytes (a 10-hour call is ~20 MB)."""
MAX_DURATION_S = 7 * 24 * 3600.0
"""Longest call duration a document may claim, seconds (a week; HEURISTIC bound against absurd values)."""
_LISTS = ("segments", "turns", "transitions", "barge_ins", "backchannels", "overlaps", "transcripts", "judge",
          "verdicts")


class DocumentError(ValueError):
    """A result or summary document that is not what livejudge wrote (one line: where and what)."""


AUDIO_MAGIC: tuple[tuple[bytes, str], ...] = ((b"RIFF", "WAV"), (b"fLaC", "FLAC"), (b"OggS", "Ogg"),
                                             (b"ID3", "MP3"), (b"\xff\xfb", "MP3"), (b"FORM", "AIFF"))
"""The first bytes of the audio files livejudge is most often handed by mistake where a result
JSON is wanted (RIFF/WAVE, FLAC, Ogg, MP3 with or without an ID3 tag, AIFF)."""


def _not_text_hint(p: Path) -> str:
    """The one-line reason a document is not UTF-8 text, with the fix: audio is named as such."""
    try:
        with p.open("rb") as f:
            head = f.read(4)
    except OSError:
        head = b""
    kind = next((name for magic, name in AUDIO_MAGIC if head.startswith(magic)), None)
    if kind:
        return (f"this is {kind} audio, not a result JSON: score the call first (`livejudge score {p} "
                f"--json result.json`) and pass result.json")
    return "not a result JSON (not UTF-8 text): pass the file `livejudge score|replay|attach --json` wrote"


def load_json_document(path: str | Path) -> object:
    """Parse a JSON file livejudge wrote, refusing what would crash or exhaust a reader: a file
    over ``MAX_DOCUMENT_BYTES``, nesting deeper than Python's parser can follow, NaN/Infinity.

    Raises:
        DocumentError: no such file, unreadable, too large, not strict JSON (one line, with the path).
    """
    import json

    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise DocumentError(f"{p}: {size / 1e6:.0f} MB is too large for a livejudge document "
                                f"(at most {MAX_DOCUMENT_BYTES / 1e6:.0f} MB)")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DocumentError(f"{p}: no such file") from None
    except UnicodeDecodeError:
        raise DocumentError(f"{p}: {_not_text_hint(p)}") from None
    except OSError as exc:
        raise DocumentError(f"{p}: not readable ({exc})") from None

    def no_constant(name: str):
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise DocumentError(f"{p}: JSON nested too deeply to be a livejudge document") from None
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise DocumentError(f"{p}: not valid JSON ({exc}); pass the result document `livejudge score|replay|attach --json` wrote") from None


def _number(v: object, where: str, lo: float, hi: float, *, none: bool = True) -> None:
    import math

    if v is None and none:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DocumentError(f"{where} must be a number, got {type(v).__name__} {str(v)[:40]!r}")
    if not (math.isfinite(v) and lo <= v <= hi):
        raise DocumentError(f"{where} = {v:.6g} is outside {lo:g}…{hi:g}")


SUMMARY_OBJECTS = ("latency_human_reference",)
"""The summary's keys whose values are objects (the published reference band); every other
summary value is a number or null."""


def check_result_document(doc: object, name: str = "result") -> dict:
    """``doc`` if it has the result document's shape (module docstring) with sane values, else
    DocumentError naming the first bad field: wrong types, non-finite numbers, and times outside
    the call (|t| ≤ duration_s + 60 s, duration_s ≤ ``MAX_DURATION_S``) — a ``gap_s`` of 1e12
    would otherwise make a 10¹³-bin histogram."""
    if not isinstance(doc, dict):
        raise DocumentError(f"{name}: not a livejudge result document (expected a JSON object)")
    _number(doc.get("duration_s"), f"{name}: duration_s", 0.0, MAX_DURATION_S)
    t_max = float(doc.get("duration_s") or 0.0) + 60.0
    for key in ("judge_info", "source", "config", "channels"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise DocumentError(f"{name}: {key} must be an object, got {type(doc[key]).__name__}")
    if not isinstance(doc.get("summary", {}), dict):
        raise DocumentError(f"{name}: summary must be an object, got {type(doc['summary']).__name__}")
    for k, v in (doc.get("summary") or {}).items():
        # every summary value is a number or null but the reference objects (a hand-edited
        # mean_p_human of [1] crashed `report` with a traceback: a trial)
        if k in SUMMARY_OBJECTS and isinstance(v, dict):
            continue
        # a hand-edited mean_p_human of 5 read "5.00 human-like" in the report (a trial): the
        # summary's probabilities, shares and counts have ranges of their own
        lo, hi = ((0.0, 1.0) if "p_human" in k or k.endswith(("_ratio", "_coverage", "_rate")) else
                  (0.0, 1e12) if k.endswith(("_count", "_windows")) else (-1e12, 1e12))
        _number(v, f"{name}: summary.{k}", lo, hi)
    for key in _LISTS:
        items = doc.get(key, [])
        if items is None:
            continue
        if not isinstance(items, list):
            raise DocumentError(f"{name}: {key} must be a list, got {type(items).__name__}")
        for i, it in enumerate(items):
            if not isinstance(it, dict):
                raise DocumentError(f"{name}: {key}[{i}] must be an object, got {type(it).__name__}")
            for f, v in it.items():
                if f.endswith("_s"):
                    _number(v, f"{name}: {key}[{i}].{f}", -t_max, t_max)
                elif f == "p_human":
                    _number(v, f"{name}: {key}[{i}].p_human", 0.0, 1.0)
                elif f == "dimensions":
                    if not isinstance(v, dict) or not all(isinstance(d, dict) for d in v.values()):
                        raise DocumentError(f"{name}: {key}[{i}].dimensions must be an object of objects")
                    for dk, d in v.items():
                        for dn in ("score", "z", "contribution", "evidence"):
                            if dn in d:
                                _number(d[dn], f"{name}: {key}[{i}].dimensions.{dk}.{dn}", -1e6, 1e6)
    return doc

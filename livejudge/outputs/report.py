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
  {score, evidence, evidence_unit, gated, z, contribution}}}]``; p_human is null (and
  ``no_evidence`` true) when the window has no evidence (every dimension gated, or the ungated
  ones carry too little of the classifier's weight), e.g. before the agent has spoken
* ``summary``: verdict counts and flagged rates (``verdict_<kind>_<outcome>_count``,
  ``verdict_<kind>_flagged_rate``, ``verdict_flagged_count``...), latency count/mean/p50/p90,
  barge-ins (``barge_in_count`` = length of
  ``barge_ins`` = ``user_barge_in_count`` + ``agent_talk_over_count``), yield (after the
  user's barge-ins), overlap ratio, backchannels, talk ratio, ``mean_p_human`` (over EVERY window
  with evidence: nothing else is left out), ``evidence_coverage`` (share of judged windows with
  evidence), dropped_windows
* ``judge_info``: backbone, head name/version, provenance ("prior" or "trained"), ``validated``:
  one line saying what P(human) was validated against (from the head's config)
* ``framework_events``: what a framework/protocol reported, for comparison only
* ``errors``: one-line messages of anything that went wrong (the document is still valid)
"""

from __future__ import annotations

import datetime as _dt
import json
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
        },
        "segments": [{"channel": s.channel, "onset_s": _r(s.onset_s), "offset_s": _r(s.offset_s)} for s in tl.segments],
        "turns": [{"channel": t.channel, "onset_s": _r(t.onset_s), "offset_s": _r(t.offset_s),
                   "n_segments": t.n_segments} for t in tl.turns],
        "transitions": [{"from": t.from_channel, "to": t.to_channel, "from_offset_s": _r(t.from_offset_s),
                         "to_onset_s": _r(t.to_onset_s), "gap_s": _r(t.gap_s)} for t in tl.transitions],
        "barge_ins": [{"by": b.by, "onset_s": _r(b.onset_s), "yield_s": _r(b.yield_s)} for b in tl.barge_ins],
        "backchannels": [{"channel": b.channel, "onset_s": _r(b.onset_s), "offset_s": _r(b.offset_s)}
                         for b in tl.backchannels],
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
            # (user starts inside an agent turn) + agent_talk_over_count (agent inside a user turn)
            "barge_in_count": len(tl.barge_ins),
            "user_barge_in_count": sm.barge_in_count,
            "agent_talk_over_count": sm.agent_talk_over_count,
            "yield_mean_s": _r(sm.yield_mean_s),
            "yield_none_count": sm.yield_none_count,
            "overlap_ratio": _r(sm.overlap_ratio),
            "overlap_s": _r(sm.overlap_s, 3),
            "backchannel_count": sm.backchannel_count,
            "talk_ratio": _r(sm.talk_ratio),
            "user_talk_s": _r(sm.user_talk_s, 3),
            "agent_talk_s": _r(sm.agent_talk_s, 3),
            "mean_p_human": _r(sum(p) / len(p)) if p else None,
            "last_p_human": _r(p[-1]) if p else None,
            "judged_windows": len(results),
            "no_evidence_windows": sum(1 for r in results if not r.has_evidence),
            "evidence_coverage": _r(len(p) / len(results), 3) if results else None,
            "dropped_windows": session.dropped_windows,
            **summarize_verdicts(vs),
        },
        "judge_info": judge_info,
        "framework_events": [{"kind": n.kind, "t_s": _r(n.t_s), **n.data} for n in session.notes],
        "errors": list(session.errors),
    }
    return doc


def write_json(doc: dict, path: str | Path) -> Path:
    """Write the document atomically (temp file + rename) so a crash never leaves half a file."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    tmp.replace(p)
    return p

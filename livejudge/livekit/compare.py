"""LiveKit's own latency figures next to the audio-true ones: a pure function of a result.

No LiveKit import: it reads the ``framework_events`` a ``livejudge.livekit`` tap recorded
(``livekit.metrics_collected``, ``livekit.conversation_item_added``, ``livekit.agent_state_changed``,
``livekit.playback_finished``) and the acoustic ``transitions`` and ``barge_ins``.
"""

from __future__ import annotations

import statistics
from typing import Any


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def _num(d: dict, key: str) -> float | None:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def livekit_comparison(result: dict, match_s: float = 1.0) -> dict:
    """What LiveKit's metrics say each reply took, beside the silence the caller heard.

    Definitions (seconds; times on the session clock):

    * LiveKit latency of a reply (one ``speech_id``): ``EOUMetrics.end_of_utterance_delay`` +
      ``LLMMetrics.ttft`` + ``TTSMetrics.ttfb`` — the sum LiveKit's docs tell users to read as
      the response latency. A part that was not reported leaves the sum None.
    * LiveKit's user stop for that reply: the EOU metric's time − ``end_of_utterance_delay`` −
      ``on_user_turn_completed_delay``.
    * the reply's audio-true latency: the acoustic user→agent transition whose user offset is
      nearest LiveKit's user stop (within ``match_s``): ``gap_s`` = the agent's first played
      speech sample − the caller's last speech sample. ``difference_s`` = LiveKit − audio.
    * ``livekit_e2e_latency_s``: the assistant message's own ``metrics.e2e_latency`` (LiveKit
      ≥ 1.3), for the assistant item whose ``started_speaking_s`` is nearest the agent onset.
    * barge-ins by the user: delay from the acoustic onset to the first agent state change
      away from "speaking" and to the first interrupted ``playback_finished``, next to the
      acoustic yield time.

    Returns:
        dict: ``response_latency`` (``rows``, ``median_difference_s``, ``mean_difference_s``,
        one-line ``text``), ``barge_ins``, ``note``.
    """
    notes = result.get("framework_events", [])
    trans = [t for t in result.get("transitions", []) if t["from"] == "user" and t["to"] == "agent"]
    by_speech: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for n in notes:
        if n["kind"] != "livekit.metrics_collected":
            continue
        sid = n.get("speech_id")
        if not sid:
            continue
        if sid not in by_speech:
            by_speech[sid] = {}
            order.append(sid)
        row = by_speech[sid]
        mtype = n.get("type", "")
        if mtype == "eou_metrics":
            row["eou"] = n
        elif mtype == "llm_metrics" and "llm" not in row:
            row["llm"] = n
        elif mtype == "tts_metrics" and "tts" not in row:
            row["tts"] = n
    assistants = [n for n in notes if n["kind"] == "livekit.conversation_item_added"
                  and n.get("role") == "assistant" and n.get("started_speaking_s") is not None]
    rows = []
    used: set[int] = set()
    for sid in order:
        parts = by_speech[sid]
        eou = parts.get("eou")
        if eou is None:
            continue
        eou_delay = _num(eou, "end_of_utterance_delay")
        ttft = _num(parts.get("llm", {}), "ttft")
        ttfb = _num(parts.get("tts", {}), "ttfb")
        lk = eou_delay + ttft + ttfb if None not in (eou_delay, ttft, ttfb) else None
        # the metric is emitted after on_user_turn_completed ran, which is after the turn decision
        user_stop = eou["t_s"] - (eou_delay or 0.0) - (_num(eou, "on_user_turn_completed_delay") or 0.0)
        row: dict[str, Any] = {
            "speech_id": sid, "livekit_user_stop_s": _r(user_stop),
            "end_of_utterance_delay_s": _r(eou_delay), "transcription_delay_s": _r(_num(eou, "transcription_delay")),
            "llm_ttft_s": _r(ttft), "tts_ttfb_s": _r(ttfb), "livekit_latency_s": _r(lk),
            "livekit_e2e_latency_s": None, "audio_user_offset_s": None, "audio_agent_onset_s": None,
            "audio_latency_s": None, "difference_s": None, "e2e_difference_s": None,
        }
        best, best_d = None, match_s
        for i, t in enumerate(trans):
            d = abs(t["from_offset_s"] - user_stop)
            if i not in used and d <= best_d:
                best, best_d = i, d
        if best is not None:
            used.add(best)
            t = trans[best]
            row.update(audio_user_offset_s=t["from_offset_s"], audio_agent_onset_s=t["to_onset_s"],
                       audio_latency_s=t["gap_s"],
                       difference_s=_r(lk - t["gap_s"]) if lk is not None else None)
            a = min(assistants, key=lambda n: abs(n["started_speaking_s"] - t["to_onset_s"]), default=None)
            if a is not None and abs(a["started_speaking_s"] - t["to_onset_s"]) <= match_s:
                row["livekit_e2e_latency_s"] = e2e = _r(_num(a, "e2e_latency"))
                row["e2e_difference_s"] = _r(e2e - t["gap_s"]) if e2e is not None else None
        rows.append(row)
    diffs = [r["difference_s"] for r in rows if r["difference_s"] is not None]
    paired = [r for r in rows if r["difference_s"] is not None]
    med_lk = _r(statistics.median([r["livekit_latency_s"] for r in paired])) if paired else None
    med_au = _r(statistics.median([r["audio_latency_s"] for r in paired])) if paired else None
    med_d = _r(statistics.median(diffs)) if diffs else None
    e2e_d = [r["e2e_difference_s"] for r in rows if r["e2e_difference_s"] is not None]
    med_e2e_d = _r(statistics.median(e2e_d)) if e2e_d else None
    # LiveKit's own e2e_latency beside the sum, with its own difference: the sum alone read as "LiveKit
    # overstates" where e2e_latency agreed with the audio within 10 ms (two trials)
    also = (f"; its messages' e2e_latency differs by {med_e2e_d * 1000:+.0f} ms (median of {len(e2e_d)})"
            if e2e_d else "")
    # a reply whose sum lacks a part (an interrupted reply reports no TTS first byte) left the medians
    # without a word (a trial read "medians of 2 replies" of 3)
    unsummed = sum(1 for r in rows if r["audio_latency_s"] is not None and r["livekit_latency_s"] is None)
    left = (f"; {unsummed} repl{'y' if unsummed == 1 else 'ies'} without all three parts left out of the sum"
            if unsummed else "")
    if paired:
        over = f"medians of {len(paired)} replies" if len(paired) > 1 else "one reply"
        text = (f"LiveKit metrics say {med_lk * 1000:.0f} ms (eou delay + LLM ttft + TTS ttfb); audio says "
                f"{med_au * 1000:.0f} ms; difference of the sum {med_d * 1000:+.0f} ms ({over}{left}){also}")
    else:
        text = "no LiveKit latency to compare" + also

    barges = []
    for b in result.get("barge_ins", []):
        if b["by"] != "user":
            continue
        row = {"audio_onset_s": b["onset_s"], "audio_yield_s": b["yield_s"],
               "agent_state_change_after_s": None, "playback_interrupted_after_s": None}
        if b["yield_s"] is None:  # talked through: the agent's state change at its reply's end answers
            # nothing (a trial with interruptions off read a 4.83 s "state change after" the barge-in)
            row["talked_through"] = True
            barges.append(row)
            continue
        for n in notes:
            if not b["onset_s"] <= n["t_s"] <= b["onset_s"] + 5.0:
                continue
            if (n["kind"] == "livekit.agent_state_changed" and n.get("old_state") == "speaking"
                    and row["agent_state_change_after_s"] is None):
                row["agent_state_change_after_s"] = _r(n["t_s"] - b["onset_s"])
            if (n["kind"] == "livekit.playback_finished" and n.get("interrupted")
                    and row["playback_interrupted_after_s"] is None):
                row["playback_interrupted_after_s"] = _r(n["t_s"] - b["onset_s"])
        barges.append(row)
    return {
        "response_latency": {
            "rows": rows, "livekit_median_s": med_lk, "audio_median_s": med_au,
            "median_difference_s": med_d, "mean_difference_s": _r(statistics.fmean(diffs)) if diffs else None,
            "text": text,
            "e2e_median_difference_s": med_e2e_d,
            "definition": "livekit = end_of_utterance_delay + llm ttft + tts ttfb (same speech_id); "
                          "audio = agent's first played speech sample - caller's last speech sample; "
                          "e2e_difference = the assistant message's e2e_latency - audio",
        },
        "barge_ins": barges,
        "note": "LiveKit figures are the session's own metrics events, stamped when emitted; audio "
                "times are livejudge's VAD bounds of the caller's input frames and the agent's played audio",
    }

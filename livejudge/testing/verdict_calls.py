"""Two calls built from real clips whose per-event verdicts are known from the placements.

``polite_call`` has an agent that does everything a person would; ``rude_call`` plants one
misbehaviour per verdict class (``livejudge.timing.verdicts``): a slow answer, barge-ins talked
through, false yields to backchannels (after one, and during one), a cut-in at a caller pause, a restart after yielding
that talks over the caller, dead air. Both return ``(Dialogue, planted)`` where ``planted`` is
``[(kind, outcome, t_s, value_s or None)]`` computed from the placements (the truth), never by
a detector. ``line`` takes ``DialogueBuilder``'s line conditions (noise, telephone, echo...).
With ``vary=True`` each timing (latencies, yields, pauses, silences) is drawn from a range that
keeps its planted outcome clear of the verdict thresholds (``VerdictConfig`` defaults) by at
least 0.1 s; ``seed`` picks the draw and the noise.

Used by tests/test_verdicts.py, tests/test_check.py and benchmarks/verdicts.py.
"""

from __future__ import annotations

import numpy as np

from livejudge.testing.dialogues import Dialogue, DialogueBuilder


def _picker(seed: int, vary: bool):
    rng = np.random.default_rng(seed + 1000)
    return lambda lo, hi, fixed: round(float(rng.uniform(lo, hi)), 3) if vary else fixed


def _truth_yield(d: Dialogue, onset_s: float) -> float:
    """The exact yield of the barge-in at ``onset_s``, from the built truth (the cut clip's end)."""
    b = next(b for b in d.truth.barge_ins if abs(b.onset_s - onset_s) < 1e-6)
    assert b.yield_s is not None
    return b.yield_s


def polite_call(seed: int = 3, vary: bool = False, **line):
    """A call where the agent does everything a person would. Returns (dialogue, planted):
    planted = [(kind, outcome, t_s, value_s or None)] from the placements."""
    x = _picker(seed, vary)
    b = DialogueBuilder(seed=seed, **line)
    planted = []
    u = b.user("cmu_cards_005")
    a = b.agent("espeak_reply_01", gap_s=x(0.2, 0.6, 0.5))
    planted.append(("latency", "human", a.onset_s, a.onset_s - u.offset_s))
    bc = b.backchannel("user", "cmu_cards_004", after_onset_s=2.0, max_s=0.4)  # inside 1.6–3.43 s of speech
    planted.append(("backchannel", "held", bc.onset_s, a.offset_s - bc.onset_s))
    u2 = b.user("cmu_numbers", gap_s=0.6)
    a2 = b.agent("espeak_reply_02", gap_s=x(0.2, 0.6, 0.4))
    planted.append(("latency", "human", a2.onset_s, a2.onset_s - u2.offset_s))
    bi = b.user("cmu_goforward", barge_in_after_s=1.5, agent_yield_s=x(0.2, 0.7, 0.4))
    planted.append(("barge_in", "yielded", bi.onset_s, "truth"))
    a3 = b.agent("espeak_reply_03", gap_s=x(0.3, 0.6, 0.5))
    planted.append(("restart", "waited", bi.onset_s, a3.onset_s - bi.offset_s))
    u4 = b.user("cmu_cards_002", gap_s=0.7)
    u5 = b.user("cmu_cards_003", at_s=u4.offset_s + x(0.6, 1.2, 0.7))  # the caller pauses, the agent waits
    planted.append(("pause", "waited", u4.offset_s, u5.onset_s - u4.offset_s))
    a4 = b.agent("espeak_reply_04", gap_s=x(0.2, 0.6, 0.45))
    planted.append(("latency", "human", a4.onset_s, a4.onset_s - u5.offset_s))
    u6 = b.user("cmu_numbers", gap_s=0.5)
    early = x(0.1, 0.4, 0.3)
    a5 = b.agent("espeak_reply_05", at_s=u6.offset_s - early)  # starts before the caller ends
    planted.append(("talk_over", "early_start", a5.onset_s, early))
    return _resolve(b.build(), planted)


def _resolve(d: Dialogue, planted: list) -> tuple[Dialogue, list]:
    """Fill the planted yields marked "truth" from the built dialogue."""
    return d, [(k, o, t, _truth_yield(d, t) if v == "truth" else v) for k, o, t, v in planted]


def rude_call(seed: int = 4, vary: bool = False, **line):
    """A call with one planted misbehaviour per class (and the verdicts they imply)."""
    x = _picker(seed, vary)
    b = DialogueBuilder(seed=seed, **line)
    planted = []
    u = b.user("cmu_cards_005")
    lat = x(1.0, 2.3, 1.5)
    a = b.agent("espeak_reply_01", gap_s=lat)
    planted.append(("latency", "s2s", a.onset_s, lat))
    bi = b.user("cmu_numbers", barge_in_after_s=2.0, agent_yield_s=None)  # inside 1.6–3.43 s of speech
    planted.append(("barge_in", "talked_through", bi.onset_s, bi.offset_s - bi.onset_s))
    a2 = b.agent("espeak_reply_02", at_s=a.offset_s + 1.0, max_s=2.3)
    bc = b.backchannel("user", "cmu_cards_004", after_onset_s=(a2.offset_s - a2.onset_s) - 0.45, max_s=0.35)
    assert a2.offset_s - bc.offset_s < 0.35  # the agent stops right after the caller's "mm"
    planted.append(("backchannel", "yielded", bc.onset_s, a2.offset_s - bc.onset_s))
    u3 = b.user("cmu_cards_002", at_s=a2.offset_s + 1.0)
    pause, resume = x(0.3, 0.7, 0.5), x(0.2, 0.5, 0.3)
    a3 = b.agent("espeak_reply_03", at_s=u3.offset_s + pause)  # cuts into the caller's pause
    u4 = b.user("cmu_goforward", at_s=u3.offset_s + pause + resume)
    planted.append(("pause", "cut_in", u3.offset_s, pause))
    # the caller goes on into it; both talk for the caller's whole turn
    planted.append(("barge_in", "talked_through", u4.onset_s, u4.offset_s - u4.onset_s))
    a4 = b.agent("espeak_reply_04", at_s=max(u4.offset_s, a3.offset_s) + 0.6)
    u5 = b.user("librivox_austen_0930", barge_in_after_s=1.5, agent_yield_s=0.3)
    planted.append(("barge_in", "yielded", u5.onset_s, "truth"))
    quiet = x(0.9, 1.3, 1.0)
    a5 = b.agent("espeak_reply_05", at_s=u5.onset_s + 0.3 + quiet)  # restarts while the caller talks
    planted.append(("restart", "restarted", u5.onset_s, "quiet"))
    planted.append(("talk_over", "talk_over", a5.onset_s, u5.offset_s - a5.onset_s))
    u6 = b.user("cmu_numbers", at_s=a5.offset_s + 0.6)
    dead = x(3.0, 4.0, 3.0)
    a6 = b.agent("espeak_reply_02", gap_s=dead)
    planted.append(("dead_air", "agent_silent", u6.offset_s, dead))
    planted.append(("latency", "beyond_s2s", a6.onset_s, dead))
    # the agent stops during a caller's "mm" (0.25 s into it)
    a7 = b.agent("espeak_reply_05", at_s=a6.offset_s + 1.5)
    mm = b.user("cmu_cards_001", barge_in_after_s=2.0, agent_yield_s=x(0.2, 0.3, 0.25), max_s=0.45)
    assert mm.offset_s - mm.onset_s < 0.8
    # it starts again after a new reply's latency (> merge_pause_s: a resume within it would
    # join the stopped reply into one turn, and the stop would not show, see verdicts' limits)
    b.agent("espeak_reply_04", at_s=mm.offset_s + x(1.0, 1.4, 1.2))
    planted.append(("backchannel", "yielded", mm.onset_s, "truth"))
    d, planted = _resolve(b.build(), planted)
    y = next(v for k, o, t, v in planted if k == "barge_in" and o == "yielded")
    # the agent's silence before restarting: from its (true) yield to the restart
    return d, [(k, o, t, a5.onset_s - (u5.onset_s + y) if v == "quiet" else v) for k, o, t, v in planted]


__all__ = ["polite_call", "rude_call"]


MOMENT_TOL_S = 0.15
"""A planted moment's time is matched within this (VAD onsets are back-dated to the first voiced
30 ms frame), seconds; used by tests/test_verdicts.py and benchmarks/verdicts.py."""
VALUE_TOL_S = 0.15
"""A measured time (yield, pause, silence, latency) is right within this, seconds."""

LINE_CONDITIONS: dict[str, dict] = {
    "quiet": dict(noise_dbfs=-65.0),
    "white-50": dict(noise_dbfs=-50.0),
    "babble-50": dict(noise_dbfs=-50.0, noise_kind="babble"),
    "room-47+reverb": dict(noise_dbfs=-47.0, noise_kind="room", room_rt60_s=0.3),
    "telephone": dict(noise_dbfs=-50.0, telephone_line=True),
    "echo-18": dict(noise_dbfs=-50.0, echo_gain_db=-18.0),
}
"""The line conditions verdicts are checked under: ``polite_call``/``rude_call`` keyword arguments."""

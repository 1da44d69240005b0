"""Running statistics of a conversation's timing, and human reference bands.

Every reference figure carries its source (see reference.md in the project's shared notes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from livejudge.timing.turns import Timeline


@dataclass(frozen=True)
class ReferenceBand:
    """A published human figure to compare a measurement with.

    Attributes:
        low_s, high_s: band of typical human values, seconds.
        label: short text for the meter.
        source: citation.
    """

    low_s: float
    high_s: float
    label: str
    source: str


RESPONSE_LATENCY_HUMAN = ReferenceBand(
    0.0, 0.742,
    "human gaps: modal 0–200 ms, mean 742 ms (answers)",
    "Stivers et al. 2009 PNAS 106:10587 (modal 0–200 ms); SPEARBench Table III human row (mean 742 ms)",
)
"""Human turn-transition timing: most gaps fall at 0–200 ms (Stivers et al. 2009); answers to
questions in Seamless Interaction average 742 ms (SPEARBench Table III)."""

S2S_LATENCY_RANGE = ReferenceBand(
    0.959, 2.724, "S2S systems 959–2724 ms", "SPEARBench Table III (S2S model rows)"
)

TYPICAL_GAP_S = 0.2
"""Typical human gap between turns, seconds (Levinson & Torreira 2015, Front. Psychol. 6:731)."""


@dataclass(frozen=True)
class TimingError:
    """How far a measured time lies from the truth, seconds: the p95 of |measured − truth| on
    ``benchmarks/vad_bounds.py``'s target set (noise −55…−40 dBFS white/babble/room, room tails
    and breaths, 8/16/48 kHz; 2 random built calls per condition). ``tests/test_compare.py``
    checks these figures against the stored run (``source``)."""

    latency_p95_abs_s: float
    yield_p95_abs_s: float
    source: str


MEASURED_TIMING_ERROR = TimingError(
    0.0548, 0.1068,
    "benchmarks/results/vad_bounds.json (python scripts/doc_figures.py --produce vad_bounds: "
    "benchmarks/vad_bounds.py --sets target): 504 latencies, 246 yields",
)
"""The measured timing error of a response latency and of a yield time (``TimingError``). ``livejudge
compare`` calls a change of a latency percentile or the mean yield time no larger than this "same"
(HEURISTIC: one measurement's p95 error as the tolerance of a difference of two)."""

MEASURED_TIMING_ERROR_NARROWBAND = TimingError(
    0.2979, 0.0983,
    "benchmarks/results/vad_bounds_narrowband.json (python scripts/doc_figures.py --produce vad_bounds_narrowband: "
    "benchmarks/vad_bounds.py --sets telephone --calls 4): 333 latencies, 138 yields",
)
"""The timing error on a narrowband call (``TimingError``): the target set's floors (−55…−40 dBFS
white, babble, room), room tails and breaths, through an 8 kHz G.711 μ-law line, against the speech
as recorded (what the caller said: a word-final fricative above 3.4 kHz is not on the line, so
latencies read long, median error +46.8 ms). ``Verdict.within_timing_error`` uses it on a call whose line
``timing.health.check_line`` finds narrowband (``Verdict.line``)."""


def percentile(values: list[float], q: float) -> float | None:
    """q-th percentile (0–100, linear interpolation, numpy's default); None when empty."""
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


@dataclass(frozen=True)
class Summary:
    """Conversation-level timing statistics; all times in seconds.

    Attributes:
        latency_count/mean/p50/p90: agent response latencies (user→agent gap_s).
        gap_count/mean: all floor transitions (either direction).
        barge_in_count: user barge-ins (user starts inside an agent turn).
        agent_talk_over_count: agent starts inside the caller's speech that the per-event verdicts
            call a talk-over (the caller went on longer than ``VerdictConfig.talk_over_grace_s``
            after the agent's onset; ``talk_over_counts``).
        agent_early_start_count: agent starts inside the caller's speech that the verdicts call
            an early start (the caller ended within ``talk_over_grace_s`` seconds: human-like).
        yield_mean_s: mean agent yield time after user barge-ins (those where it yielded; a
            barge-in the call's end cut, ``Timeline.cut_by_end``, is counted in
            ``barge_in_count`` only).
        yield_none_count: user barge-ins the agent talked through (did not yield).
        barge_in_cut_by_end_count: user barge-ins the call's end cut before they were decided
            (``Timeline.cut_by_end``): in ``barge_in_count``, in neither of the two above.
        overlap_ratio: time both speak at once / time anyone speaks.
        backchannel_count: backchannels on both channels.
        user_backchannel_count / agent_backchannel_count: the same, per channel (the caller's
            "mm"s say nothing about the agent; the agent's own say something, HEURISTIC).
        talk_ratio: agent speech time / (user + agent speech time).
    """

    latency_count: int
    latency_mean_s: float | None
    latency_p50_s: float | None
    latency_p90_s: float | None
    gap_count: int
    gap_mean_s: float | None
    barge_in_count: int
    agent_talk_over_count: int
    agent_early_start_count: int
    yield_mean_s: float | None
    yield_none_count: int
    overlap_ratio: float
    overlap_s: float
    backchannel_count: int
    user_backchannel_count: int
    agent_backchannel_count: int
    talk_ratio: float | None
    user_talk_s: float
    agent_talk_s: float
    barge_in_cut_by_end_count: int = 0


def _union_s(timeline: Timeline) -> float:
    spans = sorted((s.onset_s, s.offset_s) for s in timeline.segments)
    total, cur_lo, cur_hi = 0.0, None, None
    for lo, hi in spans:
        if cur_hi is None or lo > cur_hi:
            if cur_hi is not None:
                total += cur_hi - cur_lo
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    if cur_hi is not None:
        total += cur_hi - cur_lo
    return total


def talk_over_counts(verdicts: Iterable) -> tuple[int, int]:
    """(talk-overs, early starts) among per-event verdicts (``livejudge.timing.verdicts.Verdict``):
    the ``talk_over`` verdicts by outcome. The rule and its threshold (``talk_over_grace_s``) are the
    verdicts' own; this only counts them (verdicts imports this module, so not the reverse)."""
    talk_over = early = 0
    for v in verdicts:
        if v.kind == "talk_over":
            if v.outcome == "early_start":
                early += 1
            else:
                talk_over += 1
    return talk_over, early


def summarize(timeline: Timeline, verdicts: Iterable) -> Summary:
    """Summary statistics of a Timeline (pure).

    Args:
        timeline: ``turns.analyze`` output (or a live session's timeline).
        verdicts: the timeline's per-event verdicts (``livejudge.timing.verdicts.verdicts(timeline,
            config)`` with the thresholds the call is judged by): the agent's talk-overs and early
            starts are counted from them (``talk_over_counts``), so the summary agrees with them.
    """
    talk_over, early = talk_over_counts(verdicts)
    lat = timeline.response_latencies_s
    gaps = [t.gap_s for t in timeline.transitions]
    user_bi = [b for b in timeline.barge_ins if b.by == "user"]
    decided = [b for b in user_bi if not timeline.cut_by_end(b)]  # the call's end cut the rest
    yields = [b.yield_s for b in decided if b.yield_s is not None]
    overlap_s = sum(o.duration_s for o in timeline.overlaps)
    speech_s = _union_s(timeline)
    u, a = timeline.talk_s["user"], timeline.talk_s["agent"]
    return Summary(
        latency_count=len(lat),
        latency_mean_s=float(np.mean(lat)) if lat else None,
        latency_p50_s=percentile(lat, 50),
        latency_p90_s=percentile(lat, 90),
        gap_count=len(gaps),
        gap_mean_s=float(np.mean(gaps)) if gaps else None,
        barge_in_count=len(user_bi),
        agent_talk_over_count=talk_over,
        agent_early_start_count=early,
        yield_mean_s=float(np.mean(yields)) if yields else None,
        yield_none_count=sum(1 for b in decided if b.yield_s is None),
        overlap_ratio=overlap_s / speech_s if speech_s > 0 else 0.0,
        overlap_s=overlap_s,
        backchannel_count=len(timeline.backchannels),
        user_backchannel_count=sum(1 for b in timeline.backchannels if b.channel == "user"),
        agent_backchannel_count=sum(1 for b in timeline.backchannels if b.channel == "agent"),
        talk_ratio=a / (u + a) if (u + a) > 0 else None,
        user_talk_s=u,
        agent_talk_s=a,
        barge_in_cut_by_end_count=len(user_bi) - len(decided),
    )

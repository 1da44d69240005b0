"""IncrementalTimeline equals turns.analyze over all segments, event for event, at every step.

Segments are fed in the order a streaming VAD closes them (offset + hangover), with the
frontier a VAD would report; after each one the incremental timeline (settled prefix + tail,
with the open segments) must equal ``analyze`` of every segment so far, exactly: turns,
transitions, barge-ins, backchannels, overlaps and talk time (float sums compared with ==).
"""

import math

import numpy as np
import pytest

from livejudge.events import SpeechSegment as S
from livejudge.session import window_from_timeline
from livejudge.timing.timeline import FloatSum, IncrementalTimeline
from livejudge.timing.turns import TurnConfig, analyze

FRAME_S = 0.03
HANGOVER_S = 0.3


def _q(t: float) -> float:
    return round(round(t / FRAME_S) * FRAME_S, 6)


def independent_channels(rng, span_s: float, speech=(0.1, 3.0), pause=(0.05, 3.0)) -> list[S]:
    """Each channel alternates speech and silence independently: every overlap, backchannel
    and barge-in pattern shows up, with pauses on both sides of 0.8 s and 1.8 s."""
    out = []
    for c in ("user", "agent"):
        t = _q(rng.uniform(0, 2))
        while t < span_s:
            d = _q(rng.uniform(*speech)) or FRAME_S
            out.append(S(c, t, round(t + d, 6)))
            t = round(t + d + (_q(rng.uniform(*pause)) or FRAME_S), 6)
    return out


def dialogue(rng, n_turns: int) -> list[S]:
    """Turn-taking with gaps from −1 s to 2.5 s, pauses inside turns, backchannels, echo-like
    short segments on the listener's channel, and barge-ins."""
    ends = {"user": 0.0, "agent": 0.0}
    out = []
    t, ch = 0.3, "user"

    def put(c, a, b):
        a = max(_q(a), _q(ends[c] + FRAME_S))
        b = max(_q(b), round(a + FRAME_S, 6))
        out.append(S(c, a, b))
        ends[c] = b

    for _ in range(n_turns):
        other = "agent" if ch == "user" else "user"
        start = t
        for _k in range(int(rng.integers(1, 4))):
            put(ch, t, t + rng.uniform(0.2, 4.0))
            t = ends[ch] + rng.choice([rng.uniform(0.1, 0.79), rng.uniform(0.81, 1.9), rng.uniform(0.2, 3)])
        t = ends[ch]
        if rng.random() < 0.4:  # listener's short sound inside the turn (backchannel or echo)
            a = rng.uniform(start, t)
            put(other, a, a + rng.uniform(0.1, 1.3))
        t = t + rng.uniform(-1.0, 2.5)
        ch = other
    return out


def replay(segments: list[S], inc: IncrementalTimeline, check_every: int = 1, windows=(),
           exact: bool = True) -> int:
    """Feed segments in VAD close order, with the frontier and open segments a VAD would
    report; compare with analyze() every ``check_every`` segments. Returns the longest tail."""
    closes = sorted(segments, key=lambda s: (s.offset_s + HANGOVER_S, s.channel))
    by_ch = {c: sorted((s for s in segments if s.channel == c), key=lambda s: s.onset_s) for c in ("user", "agent")}
    n_closed = {"user": 0, "agent": 0}
    closed: list[S] = []
    max_tail = 0
    for k, seg in enumerate(closes):
        now = seg.offset_s + HANGOVER_S
        inc.add([seg])
        closed.append(seg)
        n_closed[seg.channel] += 1
        open_segs, frontier = [], {}
        for c in ("user", "agent"):
            pend = [s for s in by_ch[c][n_closed[c]:n_closed[c] + 3] if s.onset_s < now]
            frontier[c] = min([s.onset_s for s in pend], default=now)
            open_segs += [S(c, s.onset_s, min(s.offset_s, now)) for s in pend]
        inc.settle(frontier)
        max_tail = max(max_tail, inc.tail_size)
        if exact and (k % check_every == 0 or k == len(closes) - 1):
            want = analyze(closed + open_segs, inc.config)
            assert inc.timeline(open_segs) == want, f"differs after segment {k} ({seg})"
            for a, b in windows:
                w = window_from_timeline(want, a, b, None, None)
                got = inc.window(a, b, open_segs)
                assert got == {f: getattr(w, f) for f in got}, (a, b)
    inc.settle({"user": math.inf, "agent": math.inf})
    if exact:
        assert inc.timeline() == analyze(segments, inc.config)
    assert inc.tail_size == 0
    return max_tail


@pytest.mark.parametrize("seed", range(12))
def test_equal_to_analyze_on_independent_channels(seed):
    rng = np.random.default_rng(seed)
    segs = independent_channels(rng, 90.0, pause=(0.05, 4.0) if seed % 2 else (0.05, 2.0))
    inc = IncrementalTimeline(TurnConfig(), max_tail_s=math.inf)
    replay(segs, inc, windows=[(0.0, 30.0), (20.0, 50.0), (44.4, 74.4), (70.0, 100.0)])
    assert inc.forced_cuts == 0


@pytest.mark.parametrize("seed", range(12))
def test_equal_to_analyze_on_turn_taking_and_the_tail_stays_short(seed):
    rng = np.random.default_rng(100 + seed)
    segs = dialogue(rng, 60)
    cfg = TurnConfig(merge_pause_s=0.8 if seed % 3 else 0.5, backchannel_max_s=1.0 if seed % 2 else 0.7)
    inc = IncrementalTimeline(cfg, max_tail_s=math.inf)
    max_tail = replay(segs, inc, windows=[(10.0, 40.0), (60.0, 90.0)])
    assert inc.forced_cuts == 0
    # a cut comes at most floor changes, so the re-analysed tail is a few turns, not the call
    assert max_tail <= len(segs) // 4, (max_tail, len(segs))


def test_settled_prefix_grows_while_the_tail_stays_bounded_on_a_long_call():
    rng = np.random.default_rng(7)
    segs = dialogue(rng, 400)
    inc = IncrementalTimeline(max_tail_s=math.inf)
    max_tail = replay(segs, inc, check_every=97)
    assert max_tail <= 30  # of ~900 segments


def test_forced_cut_bounds_the_tail_of_a_channel_that_never_pauses():
    # the user channel chatters (echo/noise): 0.5 s sounds every 0.9 s for 10 minutes, so no
    # silence ≥ merge_pause + backchannel_max ever comes on it; the agent talks normally
    user = [S("user", round(0.9 * k, 6), round(0.9 * k + 0.5, 6)) for k in range(660)]
    agent = [S("agent", 5.0 + 12.0 * k, 9.0 + 12.0 * k) for k in range(49)]
    exact = IncrementalTimeline(max_tail_s=math.inf)
    assert replay(user + agent, exact, check_every=50) > 600  # no exact cut: the tail is the call
    inc = IncrementalTimeline(max_tail_s=30.0)
    max_tail = replay(user + agent, inc, exact=False)
    assert inc.forced_cuts > 0
    assert max_tail < 120  # ≈ 30 s of segments, not the 700 of the call
    got, want = inc.timeline(), analyze(user + agent)
    # HEURISTIC cuts: segments and talk time stay exact; a forced cut may split a turn (or
    # unhost a backchannel) on each channel, so each changes at most a few events
    assert got.segments == want.segments and got.talk_s == want.talk_s and got.overlaps == want.overlaps
    assert abs(len(got.turns) - len(want.turns)) <= 4 * inc.forced_cuts
    assert abs(len(got.transitions) - len(want.transitions)) <= 4 * inc.forced_cuts


def test_rejects_a_segment_before_the_cut():
    inc = IncrementalTimeline()
    inc.add([S("user", 0.0, 1.0)])
    inc.settle({"user": 5.0, "agent": 5.0})
    assert inc.cut_s == 5.0
    with pytest.raises(ValueError, match="before the settled cut"):
        inc.add([S("agent", 4.0, 4.5)])


@pytest.mark.parametrize("values", [[], [0.1], [0.1, 0.2, 0.3], [1e16, 1.0, -1e16, 3.3], [0.03] * 1000])
def test_float_sum_equals_builtin_sum(values):
    s = FloatSum()
    for v in values:
        s.add(v)
    assert s.value == sum(values) and type(s.value) is type(sum(values))

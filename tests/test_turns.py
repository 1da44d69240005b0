"""turns.analyze on hand-made segments: every value is computed by hand in the comments."""

import pytest

from livejudge.events import BargeIn, SpeechSegment as S, Transition
from livejudge.timing.metrics import summarize as _summarize
from livejudge.timing.turns import TurnConfig, analyze
from livejudge.timing.verdicts import VerdictConfig, verdicts


def summarize(tl, config: VerdictConfig | None = None):
    """The summary as a session makes it: talk-overs counted from the timeline's verdicts."""
    return _summarize(tl, verdicts(tl, config))


def test_turns_merge_pauses_and_response_latency():
    segs = [S("user", 0.0, 1.0), S("user", 1.5, 2.0),  # 0.5 s pause < 0.8 s → one turn
            S("agent", 2.4, 4.0),                        # latency 2.4 − 2.0 = 0.4
            S("user", 5.0, 6.0)]                         # gap 5.0 − 4.0 = 1.0
    tl = analyze(segs)
    assert [(t.channel, t.onset_s, t.offset_s, t.n_segments) for t in tl.turns] == [
        ("user", 0.0, 2.0, 2), ("agent", 2.4, 4.0, 1), ("user", 5.0, 6.0, 1)]
    assert tl.transitions == (Transition("user", "agent", 2.0, 2.4), Transition("agent", "user", 4.0, 5.0))
    assert tl.response_latencies_s == pytest.approx([0.4])
    assert tl.barge_ins == () and tl.backchannels == () and tl.overlaps == ()


def test_other_speaker_turn_in_a_pause_splits_the_turn():
    # the agent answers inside a 0.6 s user pause: the user's speech is two turns
    segs = [S("user", 0.0, 1.0), S("agent", 1.2, 1.5), S("user", 1.6, 3.0)]
    tl = analyze(segs, TurnConfig(backchannel_max_s=0.2))
    assert [(t.channel, t.onset_s) for t in tl.turns] == [("user", 0.0), ("agent", 1.2), ("user", 1.6)]
    assert [round(t.gap_s, 6) for t in tl.transitions] == [0.2, 0.1]


def test_backchannel_inside_the_other_turn_is_not_a_barge_in():
    segs = [S("agent", 0.0, 5.0), S("user", 2.0, 2.4)]  # 0.4 s, agent goes on → backchannel
    tl = analyze(segs)
    assert [(b.channel, b.onset_s, b.offset_s) for b in tl.backchannels] == [("user", 2.0, 2.4)]
    assert tl.barge_ins == () and tl.transitions == ()
    assert [t.channel for t in tl.turns] == ["agent"]


def test_barge_in_with_yield_and_without():
    # user barges in at 2.0, agent stops at 2.5 → yield 0.5; user's turn takes the floor
    tl = analyze([S("agent", 0.0, 2.5), S("user", 2.0, 4.0)])
    assert tl.barge_ins == (BargeIn("user", 2.0, 0.5),)
    assert [round(t.gap_s, 6) for t in tl.transitions] == [-0.5]
    # user speaks 1.5 s inside a long agent turn that goes on: barge-in, agent kept talking
    tl = analyze([S("agent", 0.0, 6.0), S("user", 2.0, 3.5)])
    assert tl.barge_ins == (BargeIn("user", 2.0, None),)
    assert tl.transitions == ()  # the floor never changed
    assert tl.backchannels == ()  # 1.5 s ≥ 1 s: a barge-in, not a backchannel


def test_agent_talk_over_is_a_negative_latency():
    tl = analyze([S("user", 0.0, 3.0), S("agent", 2.7, 6.0)])
    assert tl.response_latencies_s == pytest.approx([-0.3])
    assert tl.barge_ins == (BargeIn("agent", 2.7, pytest.approx(0.3)),)
    sm = summarize(tl)
    # the user ended 0.3 s after the agent's start, within talk_over_grace_s (0.6 s): the verdicts
    # call it an early start, not a talk-over, and so does the summary
    assert sm.agent_talk_over_count == 0 and sm.agent_early_start_count == 1 and sm.barge_in_count == 0


def test_summary_counts_talk_overs_and_early_starts_as_the_verdicts_do():
    """The summary counted every agent start inside user speech as a talk-over ("agent talk-overs
    3") while the verdicts called some of them acceptable early starts (a new user's trial)."""
    segs = [S("user", 0.0, 3.0), S("agent", 2.7, 6.0),   # the user ends 0.3 s after: early start
            S("user", 7.0, 12.0), S("agent", 9.0, 14.0)]  # the user goes on 3.0 s: talk-over
    tl = analyze(segs)
    assert [b.by for b in tl.barge_ins] == ["agent", "agent"]
    vs = {(v.outcome, v.t_s) for v in verdicts(tl) if v.kind == "talk_over"}
    assert vs == {("early_start", 2.7), ("talk_over", 9.0)}
    sm = summarize(tl)
    assert (sm.agent_talk_over_count, sm.agent_early_start_count) == (1, 1)
    # the threshold is the verdicts' own: a grace above 3.0 s makes both early starts
    sm = summarize(tl, VerdictConfig(talk_over_grace_s=3.5))
    assert (sm.agent_talk_over_count, sm.agent_early_start_count) == (0, 2)


def test_summary_statistics_by_hand():
    segs = [S("user", 0, 1), S("agent", 1.2, 3), S("user", 4, 5), S("agent", 5.6, 7),
            S("user", 8, 9), S("agent", 10.0, 12), S("user", 11.5, 13)]
    tl = analyze(segs)
    sm = summarize(tl)
    # latencies 0.2, 0.6, 1.0 → mean 0.6, p50 0.6, p90 = 0.6 + 0.8·0.4 = 0.92
    assert sm.latency_count == 3
    assert sm.latency_mean_s == pytest.approx(0.6)
    assert sm.latency_p50_s == pytest.approx(0.6)
    assert sm.latency_p90_s == pytest.approx(0.92)
    # user barges in at 11.5, agent stops at 12 → yield 0.5
    assert sm.barge_in_count == 1 and sm.yield_mean_s == pytest.approx(0.5)
    # overlap 0.5 s of 1+1.8+1+1.4+1+3.0 = 9.2 s of speech (union, the overlap counted once)
    assert sm.overlap_s == pytest.approx(0.5)
    assert sm.overlap_ratio == pytest.approx(0.5 / 9.2)
    # talk: user 1+1+1+1.5 = 4.5, agent 1.8+1.4+2 = 5.2
    assert sm.talk_ratio == pytest.approx(5.2 / 9.7)


def test_analyze_is_order_independent_and_empty_safe():
    segs = [S("user", 0, 1), S("agent", 1.3, 2)]
    assert analyze(segs) == analyze(list(reversed(segs)))
    empty = analyze([])
    assert empty.turns == () and summarize(empty).latency_count == 0 and summarize(empty).talk_ratio is None


def test_resuming_after_a_pause_in_ones_own_turn_is_not_a_backchannel():
    # user 0–3 s, pauses 0.5 s (< merge_pause 0.8); the agent starts at 3.2 and the user resumes
    # at 3.5 for 0.6 s while the agent talks to 6 s: the user continues (a barge-in, agent kept
    # talking), not a backchannel, though the segment is short and inside the agent's turn.
    tl = analyze([S("user", 0.0, 3.0), S("agent", 3.2, 6.0), S("user", 3.5, 4.1)])
    assert tl.backchannels == ()
    assert tl.barge_ins == (BargeIn("user", 3.5, None),)
    assert [(t.channel, t.onset_s) for t in tl.turns] == [("user", 0.0), ("agent", 3.2), ("user", 3.5)]
    # the same short segment 1.0 s after the user's speech (≥ merge_pause) is a backchannel
    tl = analyze([S("user", 0.0, 3.0), S("agent", 3.2, 6.0), S("user", 4.0, 4.6)])
    assert [(b.channel, b.onset_s) for b in tl.backchannels] == [("user", 4.0)]
    # the agent talked over the user's end (started at 2.8 < 3.0): the user yielded, so a short
    # segment 0.5 s later is a backchannel
    tl = analyze([S("user", 0.0, 3.0), S("agent", 2.8, 6.0), S("user", 3.5, 3.9)])
    assert [(b.channel, b.onset_s) for b in tl.backchannels] == [("user", 3.5)]
    # a backchannel does not make the next short segment a resumption: "mm" … "yeah" both count
    tl = analyze([S("agent", 0.0, 6.0), S("user", 2.0, 2.3), S("user", 2.6, 2.9)])
    assert [b.onset_s for b in tl.backchannels] == [2.0, 2.6]


def test_a_phrase_split_by_a_short_pause_is_one_utterance_not_two_backchannels():
    # the agent talks 0–5 s; the user says 1.2 s with a 0.25 s hesitation (pieces 0.7 s and
    # 0.25 s, each under 1 s): pause < utterance_pause_s 0.3 → one 1.2 s utterance → a barge-in
    # (agent kept talking: yield None), no backchannel
    segs = [S("agent", 0.0, 5.0), S("user", 2.0, 2.7), S("user", 2.95, 3.2)]
    tl = analyze(segs)
    assert tl.backchannels == ()
    assert tl.barge_ins == (BargeIn("user", 2.0, None),)
    # with the pause at 0.35 s (≥ 0.3) the pieces are two utterances, both backchannels
    tl = analyze([S("agent", 0.0, 5.0), S("user", 2.0, 2.7), S("user", 3.05, 3.3)])
    assert [(b.onset_s, b.offset_s) for b in tl.backchannels] == [(2.0, 2.7), (3.05, 3.3)]
    assert tl.barge_ins == ()
    # a backchannel spans its whole utterance: "mm" 0.2 s, 0.1 s pause, "hm" 0.2 s → 2.0–2.5
    tl = analyze([S("agent", 0.0, 5.0), S("user", 2.0, 2.2), S("user", 2.3, 2.5)])
    assert [(b.onset_s, b.offset_s) for b in tl.backchannels] == [(2.0, 2.5)]


def test_talking_on_through_a_barge_in_attempt_with_phrase_breaks_is_not_a_backchannel():
    # agent 0–3.0, user barges in at 2.5 and talks to 5.0; the agent pauses 0.4 s, says a
    # 0.6 s phrase (3.4–4.0, inside the user's turn), pauses 0.35 s and talks on 4.35–7.0:
    # it never stopped long enough to yield, so the 0.6 s phrase is not a backchannel
    segs = [S("agent", 0.0, 3.0), S("user", 2.5, 5.0), S("agent", 3.4, 4.0), S("agent", 4.35, 7.0)]
    tl = analyze(segs)
    assert tl.backchannels == ()
    assert [(t.channel, t.onset_s, t.offset_s) for t in tl.turns] == [
        ("agent", 0.0, 7.0), ("user", 2.5, 5.0)]
    assert tl.barge_ins == (BargeIn("user", 2.5, None),)
    # the agent yields at 3.0 and says "mm-hm" 0.6 s later (3.6–4.0, ≥ phrase_break_s) and then
    # nothing for 1 s: a backchannel
    tl = analyze([S("agent", 0.0, 3.0), S("user", 2.5, 5.0), S("agent", 3.6, 4.0), S("agent", 6.0, 8.0)])
    assert [(b.channel, b.onset_s) for b in tl.backchannels] == [("agent", 3.6)]
    assert tl.barge_ins == (BargeIn("user", 2.5, 0.5),)
    # ... and two short ones 0.6 s apart after yielding are both backchannels (no long speech follows)
    tl = analyze([S("agent", 0.0, 3.0), S("user", 2.5, 6.0), S("agent", 3.6, 3.9), S("agent", 4.5, 4.8)])
    assert [(b.channel, b.onset_s) for b in tl.backchannels] == [("agent", 3.6), ("agent", 4.5)]
    # back 0.4 s after it stopped (< phrase_break_s 0.5 s): a phrase break, not a yield and an
    # "mm-hm"; the yield is timed from where it finally stops (3.4–4.0: yield 1.5 s)
    tl = analyze([S("agent", 0.0, 3.0), S("user", 2.5, 5.0), S("agent", 3.4, 4.0), S("agent", 6.0, 8.0)])
    assert tl.backchannels == () and tl.barge_ins == (BargeIn("user", 2.5, 1.5),)
    # phrase_break_s 0 restores the old reading
    tl = analyze([S("agent", 0.0, 3.0), S("user", 2.5, 5.0), S("agent", 3.4, 4.0), S("agent", 6.0, 8.0)],
                 TurnConfig(phrase_break_s=0.0))
    assert [(b.channel, b.onset_s) for b in tl.backchannels] == [("agent", 3.4)]


def test_turn_config_rejects_negative_times_and_caps_the_utterance_pause():
    with pytest.raises(ValueError, match="merge_pause_s must be ≥ 0"):
        TurnConfig(merge_pause_s=-0.1)
    with pytest.raises(ValueError, match="utterance_pause_s must be ≥ 0"):
        TurnConfig(utterance_pause_s=-1.0)
    # merge pause 0.2 s < utterance pause 0.3 s: pieces 0.25 s apart are two turns' worth, so
    # they are not one utterance either (the cap), and each short piece is a backchannel
    segs = [S("agent", 0.0, 5.0), S("user", 2.0, 2.7), S("user", 2.95, 3.2)]
    tl = analyze(segs, TurnConfig(merge_pause_s=0.2))
    assert [(b.onset_s, b.offset_s) for b in tl.backchannels] == [(2.0, 2.7), (2.95, 3.2)]


def test_a_phrase_break_too_soon_after_a_barge_in_to_be_a_reaction_is_no_yield():
    """A trial's call (built: the agent cut 0.9 s after the caller's onset at 6.22 s): the agent's
    TTS paused 6.40–6.75 s, 0.18 s after the onset, then said the rest of its phrase to 7.12 s.
    That stop came too soon to be a reaction (reaction_s 0.2 s), yet it read as a yield: the rest
    of the phrase became an agent "backchannel" and the barge-in vanished. It is one agent turn,
    cut at 7.12 s: a barge-in with yield 0.9 s."""
    segs = [S("agent", 4.02, 4.74), S("agent", 5.05, 6.40), S("user", 6.22, 7.77), S("agent", 6.75, 7.12)]
    tl = analyze(segs)
    assert tl.backchannels == ()
    assert tl.barge_ins == (BargeIn("user", 6.22, 0.9),)
    assert [(t.channel, t.onset_s, t.offset_s) for t in tl.turns] == [("agent", 4.02, 7.12), ("user", 6.22, 7.77)]
    # a stop 0.3 s after the onset (≥ reaction_s) may be a reaction: with the agent back 0.35 s
    # later (< phrase_break_s) it is still a phrase break, timed to 7.03 s ...
    tl = analyze([S("agent", 4.02, 4.74), S("agent", 5.05, 6.40), S("user", 6.10, 7.65), S("agent", 6.75, 7.03)])
    assert tl.barge_ins == (BargeIn("user", 6.10, 0.93),) and tl.backchannels == ()
    # ... and back 0.6 s later, a yield and an agent backchannel (ambiguous by timing alone;
    # docs/verdicts.md)
    tl = analyze([S("agent", 4.02, 4.74), S("agent", 5.05, 6.40), S("user", 6.10, 7.65), S("agent", 7.0, 7.28)])
    assert tl.barge_ins == (BargeIn("user", 6.10, 0.3),) and [b.channel for b in tl.backchannels] == ["agent"]


def test_marked_by_end_is_the_one_rule_for_a_cut_barge_in_and_backchannel():
    """``Timeline.marked_by_end``: the caller's barge-in the call's end cut (both sides still
    talking at the end, 0.4 s after the onset) carries ``cut_by_end`` and no yield time; the same
    timeline before the end is known (``end_s`` None), or an agent's barge-in, is left as it is.
    The Session's events, its closing notes and the result all read this one method."""
    from dataclasses import replace

    from livejudge.events import Backchannel
    segs = [S("agent", 0.0, 10.0), S("user", 9.6, 10.0)]
    tl = analyze(segs, TurnConfig())
    assert [b.by for b in tl.barge_ins] == ["user"]
    b = tl.barge_ins[0]
    assert tl.marked_by_end(b, 1.0) is b  # end unknown: nothing is cut
    ended = replace(tl, end_s=10.0, end_decide_s=VerdictConfig().yield_max_s)
    m = ended.marked_by_end(b, 1.0)
    assert (m.cut_by_end, m.yield_s, m.onset_s) == (True, None, b.onset_s)
    agent = replace(b, by="agent")
    assert ended.marked_by_end(agent, 1.0) is agent
    # a caller's "mm" 0.5 s before the end of the agent's turn, which ran to the end: cut
    bc = Backchannel("user", 9.0, 9.5)
    ended_bc = replace(ended, turns=(replace(ended.turns[0], offset_s=10.0),))
    assert ended_bc.marked_by_end(bc, 1.0).cut_by_end
    # the call ended 5 s after it (beyond the 1 s window and grace): decided, unchanged
    later = replace(ended_bc, end_s=14.5)
    assert later.marked_by_end(bc, 1.0) is bc

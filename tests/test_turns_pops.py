"""Issue 20 (5e): a short burst on the agent channel never opens a turn.

A full-duplex speech model emits short tonal (voiced-looking) or broadband bursts between its
replies. Built calls (DialogueBuilder, real clips): a user turn, the agent's answer 4.2 s after
it, and a 20–80 ms burst on the agent channel 1.6 s before that answer. Before the fix a tonal
burst of ≥ 50 ms opened the agent's reply: latency 2.6 s read for 4.2 s. Tolerance: the
response latency within LAT_TOL_S = 40 ms of the truth; no agent turn, barge-in or backchannel
at the burst.
"""

import pytest

from livejudge.events import SpeechSegment as S
from livejudge.session import snapshot_of_call
from livejudge.testing.dialogues import DialogueBuilder
from livejudge.timing.turns import TurnConfig, analyze

LAT_TOL_S = 0.04


@pytest.mark.parametrize("kind", ["tone", "burst", "pop"])
@pytest.mark.parametrize("dur_s", [0.02, 0.05, 0.08])
@pytest.mark.parametrize("level_dbfs", [-30.0, -12.0])
def test_a_burst_before_the_answer_does_not_open_it(kind, dur_s, level_dbfs):
    b = DialogueBuilder(seed=4, noise_dbfs=-55.0)
    b.user("cmu_cards_005")
    ans = b.agent("espeak_reply_01", gap_s=4.2)
    at = ans.onset_s - 1.6
    b.pop("agent", at, kind=kind, level_dbfs=level_dbfs, dur_s=dur_s)
    d = b.build()
    snap = snapshot_of_call(d.call)
    (want,) = [t for t in d.truth.transitions if t.is_response]
    got = [t for t in snap.transitions if t.is_response]
    assert len(got) == 1 and abs(got[0].gap_s - want.gap_s) <= LAT_TOL_S, (got, want)
    assert not [t for t in snap.turns if t.channel == "agent" and t.onset_s < ans.onset_s - 0.3]
    assert snap.barge_ins == () and snap.backchannels == ()


def test_short_segments_next_to_speech_are_kept():
    # a 0.08 s piece 0.2 s after a word (< utterance_pause_s) is part of the utterance; the same
    # piece alone 1 s away is a pop; a 0.15 s "mm" alone is speech (≥ pop_max_s)
    tl = analyze([S("user", 0.0, 1.0), S("user", 1.2, 1.28), S("agent", 2.0, 4.0)])
    assert [(t.channel, t.onset_s, t.offset_s) for t in tl.turns] == [("user", 0.0, 1.28), ("agent", 2.0, 4.0)]
    tl = analyze([S("user", 0.0, 1.0), S("agent", 2.0, 2.08), S("agent", 3.0, 5.0)])
    assert [(t.channel, t.onset_s) for t in tl.turns] == [("user", 0.0), ("agent", 3.0)]
    assert tl.response_latencies_s == pytest.approx([2.0])
    tl = analyze([S("agent", 0.0, 5.0), S("user", 2.0, 2.15)])
    assert [(b.channel, b.onset_s) for b in tl.backchannels] == [("user", 2.0)]
    # pop_max_s=0 keeps every segment
    tl = analyze([S("user", 0.0, 1.0), S("agent", 2.0, 2.08), S("agent", 3.0, 5.0)], TurnConfig(pop_max_s=0))
    assert tl.response_latencies_s == pytest.approx([1.0])
